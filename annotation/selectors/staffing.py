"""A study's staffing as every web process sees it: who may rate each character, what
follows from it (`ordering.tightly_staffed`, the look-ahead's raters), and who has
reached their cap.

Staffing changes when staff approve or revoke annotators, change members, caps or a
study's status, or slowly as annotators reach their caps; a tightly staffed study, and
any study near its end, reads it on every request. So it is read from the database once
and the copy is shared through the cache by every process and node, tagged with the
staffing generation: any change staff make moves the generation (`staffing_changed`,
connected to the models' saves in `annotation.apps`), and the next request of every
process reads staffing afresh. Who has reached their cap also moves without staff, one
judgment at a time: a copy is trusted for at most STAFFING_SECONDS, the same on every
process. What a copy that old can get wrong is only the order the policy prefers: every
rule of a lease is decided when it is taken.

Without the cache (Redis away) every read asks the database.
"""

import time
from collections.abc import Callable, Sequence
from typing import cast

from django.core.cache import cache
from django.db import transaction

from common.kept import Kept

from .. import sql
from ..models import Study
from .studies import study_raters

STAFFING_SECONDS = 60
GENERATION_KEY = "staffing:generation"
# What never changes once a study is open (its design, its items): kept by each process.
_fixed: Kept[object] = Kept(24 * 3600)


def staffing_changed(**_signal_arguments) -> None:
    """Every process's copy of every study's staffing is stale: read afresh on the next
    request. Now, for copies read before the change, and again once the change is
    committed, for a copy read meanwhile from what the database showed before it."""
    _bump()
    transaction.on_commit(_bump)


def _bump() -> None:
    try:
        cache.incr(GENERATION_KEY)
    except ValueError:
        # Not there yet, or evicted: start from the clock rather than 1, so that no copy
        # read before an eviction can match the new value.
        cache.set(GENERATION_KEY, time.time_ns(), None)


def staffing_forget() -> None:
    """Drop every copy: the shared ones and this process's fixed ones."""
    _bump()
    _fixed.forget()


def shared[T](key: tuple, read: Callable[[], T], seconds: float = STAFFING_SECONDS) -> T:
    """`read()`, or the copy every process shares if it was read under the current
    staffing generation within `seconds`. `key` names the study by its id and creation
    time: ids come back after a rollback on SQLite. One round trip to the cache reads both
    the generation and the copy."""
    (value,) = shared_many([(key, read)], seconds)
    return cast(T, value)


def shared_many(
    reads: Sequence[tuple[tuple, Callable[[], object]]], seconds: float = STAFFING_SECONDS
) -> list[object]:
    """Each `(key, read)` as `shared` gives it (the same generation, the same age limit),
    in order. The generation and every copy come in one round trip to the cache, and the
    values read afresh go back in one more: the look-ahead needs the raters and who is at
    their cap on every request to a tightly staffed study."""
    names = [_name(key) for key, _read in reads]
    found = cache.get_many([GENERATION_KEY, *names])
    generation = found.get(GENERATION_KEY, 0)
    values: list[object] = []
    fresh: dict[str, tuple] = {}
    for name, (_key, read) in zip(names, reads, strict=True):
        copy = found.get(name)
        if copy is not None:
            copy_generation, read_at, value = copy
            if copy_generation == generation and time.time() - read_at < seconds:
                values.append(value)
                continue
        value = read()
        values.append(value)
        fresh[name] = (generation, time.time(), value)
    if fresh:
        cache.set_many(fresh, seconds)
    return values


def shared_forget(key: tuple) -> None:
    """Drop the shared copy under `key`."""
    cache.delete(_name(key))


def _name(key: tuple) -> str:
    # Without spaces (a creation time written out as ISO 8601): keys any cache takes.
    parts = (part.isoformat() if hasattr(part, "isoformat") else str(part) for part in key)
    return "staffing:" + ":".join(part.replace(" ", "-") for part in parts)


def fixed[T](key: tuple, read: Callable[[], T]) -> T:
    """`read()`, or this process's copy: for what a study's design fixes once it is open
    (the same answer on every process)."""
    return _fixed.read(key, read)  # type: ignore[return-value]


def raters_by_character(study: Study, characters) -> dict[int, list[int]]:
    """character -> the annotators who may rate it in the study (`study_raters`). Read for
    all the study's characters at once and shared; `characters` picks from it."""
    return _of_characters(shared(*_every_rater(study)), characters)


def at_their_cap(study: Study) -> frozenset[int]:
    """The annotators who have given as many judgments in the study as they may: their
    membership's cap where staff set one, else the study's (0: no cap), as
    `eligibility.studies_with_room` counts them. Counted by the database, shared for at
    most STAFFING_SECONDS: reading every judgment of the study to count them here cost
    each request near the end of a large capped study more than the rest of it."""
    return shared(*_capped(study))


def raters_and_capped(study: Study, characters) -> tuple[dict[int, list[int]], frozenset[int]]:
    """`raters_by_character` and `at_their_cap` together, in one round trip to the cache."""
    every, capped = shared_many([_every_rater(study), _capped(study)])
    return (
        _of_characters(cast(dict[int, list[int]], every), characters),
        cast(frozenset[int], capped),
    )


def _of_characters(every: dict[int, list[int]], characters) -> dict[int, list[int]]:
    return {c: every[c] for c in characters if c in every}


def _every_rater(study: Study) -> tuple[tuple, Callable[[], dict[int, list[int]]]]:
    def read() -> dict[int, list[int]]:
        raters: dict[int, list[int]] = {}
        for annotator_id, character_id in study_raters(study, study.characters.all()).values_list(
            "profile__user_id", "character_id"
        ):
            raters.setdefault(character_id, []).append(annotator_id)
        return raters

    return ("raters", study.pk, study.created_at), read


def _capped(study: Study) -> tuple[tuple, Callable[[], frozenset[int]]]:
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

    return ("at their cap", study.pk, study.created_at, study.cap_per_annotator), read
