"""What a process keeps of a study's staffing: who may rate each character, what follows
from it (`ordering.tightly_staffed`, the look-ahead's raters), and who has reached their
cap. Staffing changes when staff approve annotators or change members, or slowly as
annotators reach their caps, not from one request to the next, while a tightly staffed
study, and any study near its end, reads it on every request. So each process reads it
at most once per STAFFING_SECONDS; what a stale copy can get wrong is only the order the
policy prefers for that minute: every rule of a lease is decided when it is taken."""

from collections.abc import Callable

from common.kept import Kept

from .. import sql
from ..models import Study
from .studies import study_raters

STAFFING_SECONDS = 60
_kept: Kept[object] = Kept(STAFFING_SECONDS)


def staffing_forget() -> None:
    """Drop this process's copies."""
    _kept.forget()


def kept[T](key: tuple, read: Callable[[], T]) -> T:
    """`read()`, or this process's copy of it from the last STAFFING_SECONDS. `key` names
    the study by its id and creation time: ids come back after a rollback on SQLite."""
    return _kept.read(key, read)  # type: ignore[return-value]


def raters_by_character(study: Study, characters) -> dict[int, list[int]]:
    """character -> the annotators who may rate it in the study (`study_raters`)."""

    def read() -> dict[int, list[int]]:
        raters: dict[int, list[int]] = {}
        for annotator_id, character_id in study_raters(study, characters).values_list(
            "profile__user_id", "character_id"
        ):
            raters.setdefault(character_id, []).append(annotator_id)
        return raters

    return kept(("raters", study.pk, study.created_at, frozenset(characters)), read)


def at_their_cap(study: Study) -> frozenset[int]:
    """The annotators who have given as many judgments in the study as they may: their
    membership's cap where staff set one, else the study's (0: no cap), as
    `eligibility.studies_with_room` counts them. Counted by the database, once a minute:
    reading every judgment of the study to count them here cost each request near the
    end of a large capped study more than the rest of it."""
    # Without a cap on the study only members with a cap of their own can reach one: the
    # join then starts from those few memberships instead of every judgment.
    join = "LEFT JOIN" if study.cap_per_annotator else "JOIN"
    own_cap_only = "" if study.cap_per_annotator else " AND m.cap > 0"

    def read() -> frozenset[int]:
        return frozenset(
            annotator_id
            for (annotator_id,) in sql.rows(
                "SELECT j.annotator_id FROM annotation_judgment j"
                f" {join} annotation_studymembership m"
                f"  ON m.study_id = j.study_id AND m.annotator_id = j.annotator_id{own_cap_only}"
                " WHERE j.study_id = %s GROUP BY j.annotator_id, m.cap"
                " HAVING COALESCE(m.cap, %s) > 0 AND COUNT(*) >= COALESCE(m.cap, %s)",
                [study.pk, study.cap_per_annotator, study.cap_per_annotator],
            )
        )

    return kept(("at their cap", study.pk, study.created_at, study.cap_per_annotator), read)
