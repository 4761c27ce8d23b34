"""The writer's tasks: a lease on a cell, round 1, round 2, and a returned dialogue
handed in again. Every write checks the task is the writer's own and the run open."""

import difflib
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from common import enqueue
from dialogues.models import Answer

from ..models import FollowupMode, RunStatus, TaskState, WritingRun, WritingTask
from .errors import WritingError
from .runs import open_runs
from .text import clean_text
from .writers import writer_character_ids

FOLLOWUP_SIMULATE_TASK = "writing.tasks.followup_simulate"

# Answers this similar to another source's answer for the same cell are flagged:
# typed from scratch, two fans almost never come this close.
NEAR_DUPLICATE_RATIO = 0.8

# A dialogue past the writer's hands: sending its last round again changes nothing.
HANDED_IN = (TaskState.SUBMITTED, TaskState.ACCEPTED)


def current_task(user) -> WritingTask | None:
    """The task the writer is on: one started and not yet handed in (or returned)."""
    now = timezone.now()
    return (
        WritingTask.objects.filter(writer=user, run__in=open_runs(now))
        .filter(
            Q(state=TaskState.ROUND_1, lease_expires_at__gt=now)
            | Q(state__in=[TaskState.ROUND_2, TaskState.RETURNED])
            # A simulated follow-up takes seconds, worth waiting for; a person's may take
            # hours, so meanwhile the writer starts another dialogue.
            | Q(state=TaskState.AWAITING_FOLLOWUP, run__followup_mode=FollowupMode.SIMULATOR)
        )
        .select_related("run", "character", "scenario")
        .order_by("leased_at")
        .first()
    )


def _characters_full_for(user, run: WritingRun, now) -> set[int]:
    """Characters of the run that already have their allowed number of other writers.
    Asked inside the write that leases or keeps a cell for `user`: the run's row is locked
    first, so that two writers' decisions against the same limit are taken one after the
    other, not both on a count that has neither."""
    if not run.writers_per_character:
        return set()
    WritingRun.objects.select_for_update().filter(pk=run.pk).values_list("pk").first()
    writers = (
        WritingTask.objects.filter(run=run, writer__isnull=False)
        .exclude(writer=user)
        .exclude(state=TaskState.ROUND_1, lease_expires_at__lte=now)
        .values("character_id")
        .annotate(n=Count("writer", distinct=True))
    )
    return {row["character_id"] for row in writers if row["n"] >= run.writers_per_character}


@transaction.atomic
def task_next(*, user) -> WritingTask | None:
    """The writer's current task, or a lease on an open cell of a character they are
    approved to write. Open cells include round-1 leases that ran out."""
    current = current_task(user)
    if current is not None:
        return current
    character_ids = writer_character_ids(user)
    if not character_ids:
        return None
    now = timezone.now()
    for run in open_runs(now).filter(characters__in=character_ids).distinct():
        allowed = character_ids - _characters_full_for(user, run, now)
        task = (
            # Only the task row is locked: locking the joined scenario too would make other
            # writers skip every cell of that scenario.
            WritingTask.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(run=run, character_id__in=allowed)
            .filter(Q(state=TaskState.OPEN) | Q(state=TaskState.ROUND_1, lease_expires_at__lte=now))
            .order_by("character_id", "scenario__number")
            .first()
        )
        if task is None:
            continue
        task.state = TaskState.ROUND_1
        task.writer = user
        task.leased_at = now
        task.lease_expires_at = now + timedelta(minutes=run.lease_minutes)
        task.answer_r1 = ""
        task.paste_events = 0
        task.save()
        return task
    return None


def own_task_for_update(*, user, token: str) -> WritingTask:
    """The writer's own task of an open run, locked for the write; else WritingError."""
    task = (
        WritingTask.objects.select_for_update(of=("self",))
        .select_related("run", "character", "scenario")
        .filter(token=token, writer=user)
        .first()
    )
    if task is None:
        raise WritingError("not_yours", _("This writing task is not assigned to you."))
    if task.run.status != RunStatus.OPEN:
        raise WritingError("run_closed", _("This writing run is closed."))
    return task


def _near_duplicates(task: WritingTask, round_: int, text: str) -> list[str]:
    """Other sources' answers for the same cell that this text nearly repeats."""
    others = Answer.objects.filter(
        character=task.character, scenario=task.scenario, round=round_
    ).exclude(source=task.run.source)
    found = []
    for slug, other in others.values_list("source__slug", "text"):
        matcher = difflib.SequenceMatcher(None, text, other, autojunk=False)
        if (
            matcher.quick_ratio() >= NEAR_DUPLICATE_RATIO
            and matcher.ratio() >= NEAR_DUPLICATE_RATIO
        ):
            found.append(f"near_duplicate:{slug}:r{round_}")
    return found


def _flag(task: WritingTask, round_: int, text: str, pastes: int) -> None:
    flags = [f for f in task.flags if not f.endswith(f":r{round_}") and f != f"paste:r{round_}"]
    if pastes:
        flags.append(f"paste:r{round_}")
    flags += _near_duplicates(task, round_, text)
    task.flags = flags
    task.paste_events += max(0, pastes)


@transaction.atomic
def round_1_submit(*, user, token: str, text: str, pastes: int = 0) -> WritingTask:
    # A lease that ran out put the cell back in the pool, but until another writer takes
    # it (then it is no longer this writer's: `not_yours`) the late answer is kept, not
    # thrown away with the time the writer spent on it; unless the run no longer takes
    # work (past its deadline: nobody would write the follow-up) or other writers have
    # taken the character's places meanwhile, which the answer would exceed.
    task = own_task_for_update(user=user, token=token)
    now = timezone.now()
    answer = clean_text(
        text, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
    late = task.state == TaskState.ROUND_1 and task.lease_expires_at <= now
    if late and (
        not open_runs(now).filter(pk=task.run_id).exists()
        or task.character_id in _characters_full_for(user, task.run, now)
    ):
        raise WritingError(
            "lease_expired",
            _("Your time for this task ran out and it went back to the pool. Nothing was saved."),
        )
    if task.state != TaskState.ROUND_1:
        if answer == task.answer_r1:
            return task  # sent twice (a double click, a second tab): saved once
        raise WritingError("not_round_1", _("Round 1 of this task is already handed in."))
    task.answer_r1 = answer
    _flag(task, 1, task.answer_r1, pastes)
    task.seconds_r1 = (now - task.leased_at).total_seconds()
    task.state = TaskState.AWAITING_FOLLOWUP
    task.lease_expires_at = None
    task.save()
    if task.run.followup_mode == FollowupMode.SIMULATOR:
        # With the broker down, `followups_waiting_resume` sends it later.
        enqueue.on_commit(FOLLOWUP_SIMULATE_TASK, task.pk, long_running=True)
    return task


@transaction.atomic
def round_2_submit(*, user, token: str, text: str, pastes: int = 0) -> WritingTask:
    """Hand in round 2; a returned task is handed in again from here, both rounds."""
    task = own_task_for_update(user=user, token=token)
    answer = clean_text(
        text, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
    if task.state not in (TaskState.ROUND_2, TaskState.RETURNED):
        if task.state in HANDED_IN and answer == task.answer_r2:
            return task  # sent twice: saved once
        raise WritingError("not_round_2", _("This task is not waiting for your round 2."))
    task.answer_r2 = answer
    _flag(task, 2, task.answer_r2, pastes)
    now = timezone.now()
    if task.state == TaskState.ROUND_2 and task.round_2_started_at is not None:
        task.seconds_r2 = (now - task.round_2_started_at).total_seconds()
    task.state = TaskState.SUBMITTED
    task.submitted_at = now
    task.save()
    return task


@transaction.atomic
def returned_resubmit(
    *, user, token: str, answer_r1: str, answer_r2: str, pastes: int = 0
) -> WritingTask:
    """Hand in a returned dialogue again, both rounds corrected (the follow-up stays as it
    is); all or nothing."""
    task = own_task_for_update(user=user, token=token)
    round_1 = clean_text(
        answer_r1, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
    if task.state != TaskState.RETURNED:
        if task.state in HANDED_IN and round_1 == task.answer_r1:
            return round_2_submit(user=user, token=token, text=answer_r2)  # sent twice?
        raise WritingError("not_returned", _("This task was not returned to you."))
    task.answer_r1 = round_1
    _flag(task, 1, task.answer_r1, pastes)
    task.save()
    return round_2_submit(user=user, token=token, text=answer_r2)
