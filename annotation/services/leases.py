"""Which item an annotator gets next, and their lease on it.

The policy, in order: only open studies (only their members, once a study has members),
never a study containing answers the annotator wrote, only characters the annotator is
approved for, caps per study (or the member's own) and per day, never an item twice,
never an answer twice within a study (blinding across items), never more leases plus
judgments on an item than the overlap; gold items mixed in at the study's rate; the least
complete character first (when the study balances characters), then diversity sets, then
items closest to complete, then random; where a greedy choice could strand judgments
nobody else can give (near the end of a character's work, or with about the annotators it
needs), a look-ahead puts such items last. Sides are counterbalanced per annotator.

The order is planned once and taken from over several requests (`worklists`): the
overlap, an item or answer never twice and the study being open are checked again when
the lease is taken; a change of who may rate what makes every plan it touches stale.
Correctness under concurrency comes from row locks with SKIP LOCKED and the database's
unique constraints, not from timing.
"""

import random
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from common.text import plain_text

from .. import selectors, sql
from ..models import (
    AnswerExposure,
    Assignment,
    AssignmentState,
    ItemKind,
    Study,
    StudyMembership,
    StudyStatus,
)
from ..pairing import (
    left_first,
    scheduled_left_slot,
)
from ..selectors.eligibility import current_lease, items_full
from ..selectors.sides import SideHistory, side_schedule_seed
from . import worklists
from .errors import AnnotationError


def _lease(
    user, item_id: int, study: Study, now, *, gold: bool, sides: SideHistory
) -> Assignment | None:
    # Only the item's own row is locked; its count and its study's status are read with
    # the lock. The rest of the row, with its character and scenario for the rating page,
    # never changes once the study is open: it comes from the process's copy.
    locked = sql.first_row(
        "SELECT i.judgment_count, s.status FROM annotation_item i"
        " JOIN annotation_study s ON s.id = i.study_id WHERE i.id = %s" + _lock_skipping(),
        [item_id],
    )
    if locked is None:
        return None  # another annotator is leasing it right now
    judgment_count, status = locked
    if status != StudyStatus.OPEN:
        return None  # closed since the annotator's worklist was planned
    shown = selectors.item_shown(item_id)
    if shown is None:
        return None  # an item without answers is never served
    block, item = shown
    # The study as planned: a change staff make to it makes every plan anew (`worklists`).
    item.judgment_count, item.study = judgment_count, study
    # A gold item is served to every annotator who is due one; any other only while its
    # judgments and live leases leave room (counted by `_expose_and_lease`).
    leases_allowed = None if gold else study.overlap - judgment_count
    if leases_allowed is not None and leases_allowed <= 0:
        return None
    slots = [block.slots[slot] for slot in sorted(block.slots)]
    if item.kind == ItemKind.PAIR:
        order = left_first(
            [a.source_id for a in slots],
            sides.imbalance,
            random.random(),
            scheduled=scheduled_left_slot(
                side_schedule_seed(user, study), sides.shown, sides.recent
            ),
        )
        left, right = slots[order[0]].source_id, slots[order[1]].source_id
    else:
        order = sorted(block.slots)
        random.shuffle(order)
        left = right = None
    lease = Assignment(
        item=item,
        annotator=user,
        display_order=order,
        served_at=now,
        expires_at=now + timedelta(minutes=study.lease_minutes),
        left_source_id=left,
        right_source_id=right,
    )
    if not _expose_and_lease(user, study, block.exposed_answer_ids, lease, leases_allowed, now):
        return None
    if left is not None:
        sides.record(left, right, order[0])
    return lease


def _lock_skipping() -> str:
    """Row locks that skip rows another transaction holds, where the database has them.
    SQLite has none and needs none: its write transactions run one at a time."""
    if connection.features.has_select_for_update_skip_locked:
        return " FOR UPDATE OF i SKIP LOCKED"
    return ""


def _expose_and_lease(
    user, study: Study, answer_ids, lease: Assignment, leases_allowed: int | None, now
) -> bool:
    """Record that this annotator has now seen these answers in the study, and write the
    lease; False, with nothing written, if they had already seen one of them, or if the
    item already has `leases_allowed` live leases (None: no limit).

    The live leases are counted once the item's row is locked (`_lease`), by a statement
    after the locking one: no other lease of this item can start until we commit, and
    that statement sees every lease committed before the lock was granted. Counted inside
    the locking statement, they would be read from that statement's snapshot, which
    misses a lease committed between the snapshot and the lock (PostgreSQL, read
    committed): the item would then be leased beyond its overlap.

    The exposures are recorded first: a concurrent lease of the same answers by the same
    annotator (another tab) then finds them taken and gets nothing, instead of showing an
    answer twice. Once they are recorded, the lease itself cannot conflict: its (item,
    annotator) pair exposes those same answers. One INSERT ... ON CONFLICT DO NOTHING
    rather than a savepoint around an insert that may fail: the unique constraint still
    decides (a concurrent insert of the same row waits for its transaction), and the rows
    it returns say whether every answer was new."""
    answer_ids = list(answer_ids)
    if connection.vendor == "postgresql" and answer_ids:
        return _expose_and_lease_at_once(user, study, answer_ids, lease, leases_allowed, now)
    if leases_allowed is not None:
        (leases,) = sql.one_row(*_live_leases(lease.item_id, now))
        if leases >= leases_allowed:
            return False
    if answer_ids:
        recorded = [row[0] for row in sql.rows(*_exposures(user, study, answer_ids))]
        if len(recorded) < len(answer_ids):
            AnswerExposure.objects.filter(pk__in=recorded).delete()
            return False
    sql.insert(lease)  # written out: on every lease (see `annotation.sql`)
    return True


def _expose_and_lease_at_once(
    user, study: Study, answer_ids: list, lease: Assignment, leases_allowed: int | None, now
) -> bool:
    """`_expose_and_lease` in one statement (PostgreSQL), where SQLite takes three: the
    exposures are written only while the item has room, and the lease only if every
    exposure was new. The statement's snapshot is taken after the lock was granted, so
    its count of live leases is the one `_expose_and_lease` asks for."""
    room, room_params = "TRUE", []
    if leases_allowed is not None:
        live, live_params = _live_leases(lease.item_id, now)
        room, room_params = f"({live}) < %s", [*live_params, leases_allowed]
    exposed, params = _exposures(user, study, answer_ids, room, room_params)
    every_answer_new = f"(SELECT 1 FROM exposed HAVING COUNT(*) = {len(answer_ids)}) AS new"
    leased, leased_params = sql.insert_from(every_answer_new, [lease])
    lease_id, recorded = sql.one_row(
        f"WITH exposed AS ({exposed}), leased AS ({leased} RETURNING id)"
        " SELECT (SELECT id FROM leased), ARRAY(SELECT id FROM exposed)",
        [*params, *leased_params],
    )
    if lease_id is None:
        AnswerExposure.objects.filter(pk__in=recorded).delete()
        return False
    sql.saved(lease, lease_id)
    return True


def _exposures(
    user, study: Study, answer_ids: list, condition: str = "TRUE", condition_params=()
) -> tuple[str, list]:
    """The INSERT of these answers' exposures to the annotator, if `condition` holds, that
    writes only the new ones and returns their ids. (SQLite needs the WHERE clause to read
    ON CONFLICT after a SELECT.)"""
    return (
        "INSERT INTO annotation_answerexposure (annotator_id, study_id, answer_id)"
        f" SELECT * FROM (VALUES {', '.join(['(%s, %s, %s)'] * len(answer_ids))}) AS given"
        f" WHERE {condition} ON CONFLICT DO NOTHING RETURNING id",
        [
            *(value for answer_id in answer_ids for value in (user.pk, study.pk, answer_id)),
            *condition_params,
        ],
    )


def _live_leases(item_id: int, now) -> tuple[str, list]:
    """The count of the item's live leases (written out: asked on every lease)."""
    return (
        "SELECT COUNT(*) FROM annotation_assignment"
        f" WHERE item_id = %s AND state = {sql.literal(AssignmentState.ACTIVE)}"
        " AND expires_at > %s",
        [item_id, sql.db_moment(now)],
    )


@transaction.atomic
def assignment_next(
    *, user, study: Study | None = None, known_without_lease: bool = False
) -> Assignment | None:
    """The annotator's current lease, or a new one on the item that most needs them
    (within `study` when given), taken from their worklist (`worklists`).
    `known_without_lease`: the caller read, moments ago in this request, that the
    annotator holds no live lease (a submission: `selectors.lease_at_work` read their
    other leases with the one submitted), so that is not asked again. Not a lock, and
    neither is the question here: two tabs asking at the same moment can each be given
    a lease either way."""
    now = timezone.now()
    if not known_without_lease:
        current = current_lease(user, now, study)
        if current is not None:
            return current
    worklist = worklists.worklist_of(user, now, study)
    lease = _lease_from(worklist, user, now)
    if lease is None and worklist.from_cache:
        # The kept plan ran dry: whatever is left now, only a new plan can tell.
        worklist = worklists.worklist_plan(user, now, study)
        lease = _lease_from(worklist, user, now)
    worklists.worklist_keep(user, study, worklist)
    return lease


def _lease_from(worklist: worklists.Worklist, user, now) -> Assignment | None:
    """The first candidate of the worklist that can be leased now, gold first where it is
    due; the worklist learns what was taken and what was refused."""
    for planned in worklist.studies:
        if not planned.has_room():
            continue
        for gold in [True, False] if planned.gold_due() else [False]:
            candidates = list(
                worklist.gold_candidates(planned, user, now) if gold else planned.items
            )
            full: set[int] = set()
            # Gold items have no overlap to fill, so only others are asked about.
            asked_which_are_full = gold
            for position, item_id in enumerate(candidates):
                if item_id in full:
                    continue
                lease = _lease(
                    user,
                    item_id,
                    planned.study,
                    now,
                    gold=gold,
                    sides=worklist.sides(planned, user),
                )
                if lease is not None:
                    worklist.taken(planned, item_id)
                    return lease
                worklist.refused(item_id)
                if not asked_which_are_full:
                    asked_which_are_full = True
                    # As a study fills, every plan ranks the same few items that lack one
                    # judgment first, and a crowd goes for them at once: after one
                    # refusal, one read says which of the rest have filled up meanwhile,
                    # instead of a locked read and an insert that writes nothing for each.
                    full = items_full(candidates[position + 1 :], planned.study, now)
                    for filled in full:
                        worklist.refused(filled)
    return None


@transaction.atomic
def assignment_skip(*, user, token: str, reason: str) -> Assignment:
    assignment = active_assignment_for_update(user=user, token=token)
    reason = plain_text(reason, 200)
    if not reason:
        raise AnnotationError("skip_reason", _("Please say why you skip this item."))
    _skip_allowance_check(user, assignment.item.study_id)
    assignment.state = AssignmentState.SKIPPED
    assignment.skip_reason = reason
    assignment.save(update_fields=["state", "skip_reason"])
    # A skipped lease is no judgment: the worklist's counts would run ahead of the truth.
    worklists.plans_forget(user.pk)
    return assignment


def _skip_allowance_check(user, study_id: int) -> None:
    """Refuse a skip beyond the member's allowance (`StudyMembership.skips_allowed`). The
    membership row is locked while its skips are counted: two skips posted at once from
    two tabs (each its own lease) are counted one after the other. The rating page counts
    them the same way in `selectors.progress_of` (its statement's `skips_left`)."""
    allowed = (
        StudyMembership.objects.select_for_update()
        .filter(study_id=study_id, annotator=user)
        .values_list("skips_allowed", flat=True)
        .first()
    )
    if allowed is None:
        return
    skipped = Assignment.objects.filter(
        annotator=user, item__study_id=study_id, state=AssignmentState.SKIPPED
    ).count()
    if skipped >= allowed:
        message = ngettext(
            "You may skip %(n)d item in this study and have done so: please rate this one.",
            "You may skip %(n)d items in this study and have done so: please rate this one.",
            allowed,
        ) % {"n": allowed}
        if allowed == 0:
            message = _("This study asks you to rate every item: it cannot be skipped.")
        raise AnnotationError("skips_used", message)


def assignment_check_active(*, user, token: str) -> Assignment:
    """The live lease behind `token`, or AnnotationError saying why it is not live."""
    with transaction.atomic():
        return active_assignment_for_update(user=user, token=token)


def active_assignment_for_update(*, user, token: str) -> Assignment:
    """This annotator's live lease with this token, row-locked until the transaction
    ends (submission and skip both start here); AnnotationError saying why otherwise."""
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("item__study")
        .filter(token=token, annotator=user)
        .first()
    )
    if assignment is None:
        raise AnnotationError("not_yours", _("This item is not assigned to you."))
    lease_check(assignment)
    return assignment


def lease_check(assignment: Assignment) -> None:
    """Raise AnnotationError saying why this lease (read with its item's study) is not
    live; return quietly if it is."""
    if assignment.state == AssignmentState.SUBMITTED:
        raise AnnotationError("already_submitted", _("You have already submitted this item."))
    if assignment.state == AssignmentState.SKIPPED:
        raise AnnotationError("skipped", _("You skipped this item."))
    if assignment.state == AssignmentState.EXPIRED or assignment.expires_at <= timezone.now():
        raise AnnotationError(
            "lease_expired",
            _("Your time for this item ran out and it went back to the pool. Nothing was saved."),
        )
    if assignment.item.study.status == StudyStatus.PAUSED:
        # Told apart from a closed study: the item may come back to them when it reopens.
        raise AnnotationError(
            "study_paused",
            _(
                "This study is paused: ratings cannot be sent until it reopens. Your"
                " ratings of this item stay in this browser and come back with it if it is"
                " still reserved for you then."
            ),
        )
    if assignment.item.study.status != StudyStatus.OPEN:
        raise AnnotationError("study_closed", _("This study is not open any more."))
