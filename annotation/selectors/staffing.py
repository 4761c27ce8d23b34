"""What a process keeps of a study's staffing: who may rate each character, and what
follows from it (`ordering.tightly_staffed`, the look-ahead's raters). Staffing changes
when staff approve annotators or change members, not from one request to the next, while
a tightly staffed study reads it on every request. So each process reads it at most once
per STAFFING_SECONDS; what a stale copy can get wrong is only the order the policy
prefers for that minute: every rule of a lease is decided when it is taken."""

import time
from collections.abc import Callable

from ..models import Study
from .studies import study_raters

STAFFING_SECONDS = 60
_kept: dict[tuple, tuple[float, object]] = {}


def staffing_forget() -> None:
    """Drop this process's copies (tests start from none)."""
    _kept.clear()


def kept[T](key: tuple, read: Callable[[], T]) -> T:
    """`read()`, or this process's copy of it from the last STAFFING_SECONDS. `key` names
    the study by its id and creation time: ids come back after a rollback on SQLite."""
    found = _kept.get(key)
    if found is not None and time.monotonic() - found[0] < STAFFING_SECONDS:
        return found[1]  # type: ignore[return-value]
    if len(_kept) > 1000:
        _kept.clear()
    value = read()
    _kept[key] = (time.monotonic(), value)
    return value


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
