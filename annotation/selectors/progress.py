"""The progress line of the rating page and when a break is due: how much the annotator
has done, today and in all, and how much is left."""

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.utils import timezone

from common.kept import Kept

from .. import sql
from ..models import AssignmentState, StudyStatus


@dataclass
class Progress:
    done: int
    today: int
    remaining: int
    break_due: bool
    # Skips the annotator has left in the study of the item shown: None where the study
    # sets no limit (every annotator recruited on the site; see `StudyMembership`).
    skips_left: int | None = None
    # A study the annotator has rated in is paused: its items are still counted (done and
    # left), and the page says why none of them comes now.
    paused: bool = False

    @property
    def total(self) -> int:
        return self.done + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


# The studies the progress line counts: under way, open or paused for a while.
_UNDER_WAY = f"{sql.literal(StudyStatus.OPEN)}, {sql.literal(StudyStatus.PAUSED)}"


def progress_of(user, *, study_id: int | None = None) -> Progress:
    """Shown on every rating page: one written statement (see `annotation.sql`) of one row,
    however many judgments the annotator gave today: the counts, and today's sitting as
    the break rule reads it, with the rule of the study last rated; and, for the study of
    the item shown (`study_id`), the skips left where the membership limits them (the
    skipped leases are counted only then: a panel participant's handful).

    What is left is the live leases plus the estimate of what the annotator may still
    take, and every item taken (leased, whatever came of it) leaves the estimate: so the
    total stays put as an item is leased and rated, and falls by one when one is skipped or
    let go, at once and not when the estimate is next made.

    Both count the studies under way, open or paused: a pause is for a while, and the
    line stays as it was through it (counted as open studies only, the work done fell to
    0 at once while the estimate, kept for two minutes, still held the study's items:
    "Done 0 of 56")."""
    now = timezone.now()
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    since_previous = sql.milliseconds_between(
        "submitted_at", "LAG(submitted_at) OVER (ORDER BY submitted_at)"
    )
    (
        done,
        leased,
        taken,
        today,
        last_at,
        started_at,
        every_items,
        every_minutes,
        skips_left,
        paused,
    ) = sql.one_row(
        "SELECT"
        " (SELECT COUNT(*) FROM annotation_judgment j"
        "  WHERE j.annotator_id = %s"
        "  AND j.study_id IN (SELECT s.id FROM annotation_study s"
        f"  WHERE s.status IN ({_UNDER_WAY}))),"
        " (SELECT COUNT(*) FROM annotation_assignment a"
        f"  WHERE a.annotator_id = %s AND a.state = {sql.literal(AssignmentState.ACTIVE)}"
        "  AND a.expires_at > %s),"
        " (SELECT COUNT(*) FROM annotation_assignment a WHERE a.annotator_id = %s),"
        " d.today, d.last_at, d.started_at, last.break_every_items, last.break_every_minutes,"
        " skips.skips_left,"
        # Whether they leased in a paused study is read from the answers they were shown
        # there (every lease records them, `services.leases`): one probe of that unique
        # index per paused study. Asked of their leases joined to the items instead,
        # PostgreSQL read every item of each paused study they never leased in (ten paused
        # studies of 2,400 items: some 100 ms on every rating page).
        " (SELECT COUNT(*) FROM annotation_study ps"
        f"  WHERE ps.status = {sql.literal(StudyStatus.PAUSED)}"
        "  AND EXISTS (SELECT 1 FROM annotation_answerexposure pe"
        "   WHERE pe.annotator_id = %s AND pe.study_id = ps.id))"
        # A sitting starts at the judgment given more than SESSION_GAP after the one before.
        " FROM (SELECT COUNT(*) AS today, MAX(submitted_at) AS last_at,"
        "  MAX(CASE WHEN gap IS NULL OR gap > %s THEN submitted_at END) AS started_at"
        f"  FROM (SELECT submitted_at, {since_previous} AS gap FROM annotation_judgment"
        "   WHERE annotator_id = %s AND submitted_at >= %s) given) d"
        " LEFT JOIN (SELECT s.break_every_items, s.break_every_minutes"
        "  FROM annotation_judgment j JOIN annotation_study s ON s.id = j.study_id"
        "  WHERE j.annotator_id = %s AND j.submitted_at >= %s"
        "  ORDER BY j.submitted_at DESC LIMIT 1) last ON 1 = 1"
        # No membership (or no study shown): no row, so NULL, as for no limit. The skips
        # are counted as `services.leases._skip_allowance_check` counts them when a skip
        # is asked for (skipped leases of the study's items): change both together.
        " LEFT JOIN (SELECT CASE WHEN m.skips_allowed IS NULL THEN NULL"
        "  ELSE m.skips_allowed - (SELECT COUNT(*) FROM annotation_assignment a"
        "   JOIN annotation_item i ON i.id = a.item_id"
        f"   WHERE a.annotator_id = %s AND a.state = {sql.literal(AssignmentState.SKIPPED)}"
        "   AND i.study_id = m.study_id) END AS skips_left"
        "  FROM annotation_studymembership m WHERE m.study_id = %s AND m.annotator_id = %s)"
        " skips ON 1 = 1",
        [
            user.pk,
            user.pk,
            sql.db_moment(now),
            user.pk,
            user.pk,
            SESSION_GAP // timedelta(milliseconds=1),
            user.pk,
            sql.db_moment(start_of_day),
            user.pk,
            sql.db_moment(start_of_day),
            user.pk,
            study_id,
            user.pk,
        ],
    )
    sitting = Sitting(
        today,
        sql.moment_of(last_at) if today else None,
        sql.moment_of(started_at) if today else None,
        every_items or 0,
        every_minutes or 0,
    )
    remaining = _items_left(user, taken) + leased
    return Progress(
        done=done,
        today=today,
        remaining=remaining,
        break_due=is_break_due_in(sitting, now),
        skips_left=None if skips_left is None else max(0, skips_left),
        paused=bool(paused),
    )


ITEMS_LEFT_SECONDS = 120
# Each web process also keeps the estimates it read, until their two minutes are over
# (user -> estimate, judgments then, until when by the clock): a round trip to Redis is a
# few percent of a judgment's CPU, and an annotator's pages fall on the same few
# processes. Dropped whole, should so many annotators pass through one process.
ITEMS_LEFT_KEPT_HERE = 10_000
_items_left_here: Kept[tuple[int, int, float]] = Kept(ITEMS_LEFT_SECONDS, most=ITEMS_LEFT_KEPT_HERE)


def _items_left(user, taken: int) -> int:
    """The estimate of what is left scans the study's items, too costly for every page;
    it is cached for two minutes and lowered by each item the annotator has taken since
    (`taken`: their leases of every state, as the estimate leaves out the scenarios they
    had an item of). With Redis down the cache answers "nothing there"
    (chatanime_site.cache) and each process estimates it afresh, for its own two minutes."""
    kept = _items_left_here.get(user.pk)
    if kept is None:
        kept = _items_left_shared(user, taken)
        # As long as the shared copy: every process's estimate ends at the same moment.
        _items_left_here.keep(user.pk, kept, seconds=kept[2] - time.time())
    estimate, taken_then, _until = kept
    return max(0, estimate - (taken - taken_then))


def _items_left_shared(user, taken: int) -> tuple[int, int, float]:
    from django.core.cache import cache

    from .eligibility import items_left_estimate

    # Copies that counted judgments rather than items taken (before the key said so) are
    # left to expire.
    key = f"items-left-taken:{user.pk}"
    cached = cache.get(key)
    # A copy kept before copies said until when is estimated afresh, like a missing one.
    if not (isinstance(cached, tuple) and len(cached) == 3):
        cached = (items_left_estimate(user), taken, time.time() + ITEMS_LEFT_SECONDS)
        cache.set(key, cached, ITEMS_LEFT_SECONDS)
    return cached


def items_left_forget() -> None:
    """Forget this process's copies of the estimates (tests that empty the cache)."""
    _items_left_here.forget()


SESSION_GAP = timedelta(minutes=10)


class Sitting(NamedTuple):
    """Today's judgments (or hand-ins) as the break rule reads them."""

    count: int
    last_at: datetime | None
    # The first of the current sitting: none of its judgments came more than SESSION_GAP
    # after the one before.
    started_at: datetime | None
    # The break rule of the study of the last one (0: none).
    every_items: int
    every_minutes: int


def sitting_of(today: list[tuple]) -> Sitting:
    """The sitting of today's (moment, every_items, every_minutes), in time order."""
    if not today:
        return Sitting(0, None, None, 0, 0)
    last_at, every_items, every_minutes = today[-1]
    started_at = last_at
    for submitted_at, *_rest in reversed(today):
        if started_at - submitted_at > SESSION_GAP:
            break
        started_at = submitted_at
    return Sitting(len(today), last_at, started_at, every_items, every_minutes)


def is_break_due(today: list[tuple], now) -> bool:
    """`is_break_due_in` the sitting of today's (moment, every_items, every_minutes)."""
    return is_break_due_in(sitting_of(today), now)


def is_break_due_in(sitting: Sitting, now) -> bool:
    """A break is due after every N items of today, or when the current sitting (no gap
    of 10 minutes) has lasted longer than the study's limit."""
    if not sitting.count or sitting.last_at is None or sitting.started_at is None:
        return False
    if now - sitting.last_at > SESSION_GAP:
        return False
    if sitting.every_items and sitting.count % sitting.every_items == 0:
        return True
    return bool(sitting.every_minutes) and now - sitting.started_at >= timedelta(
        minutes=sitting.every_minutes
    )
