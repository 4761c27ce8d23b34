"""The user's follow-up between the two rounds: written by another approved writer, or
asked of the run's user simulator."""

from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from collection.client import CallFailed
from collection.models import EndpointKeyMissing
from collection.simulator import EmptyFollowup, simulate_followup
from common import enqueue

from ..models import FollowupMode, TaskState, WritingTask
from .errors import WritingError
from .rounds import FOLLOWUP_SIMULATE_TASK, own_task_for_update
from .runs import open_runs
from .text import NOTE_MAX_CHARS, clean_text
from .writers import writer_character_ids


def _followup_ready(task: WritingTask, question: str, now) -> None:
    task.question_r2 = question
    task.state = TaskState.ROUND_2
    task.round_2_started_at = now
    task.followup_error = ""
    task.followup_expires_at = None


def followup_simulate(*, task_id: int) -> str:
    """Ask the run's simulator for the user's follow-up to this task's round 1. Idempotent:
    a task no longer waiting is left alone. The call happens outside any transaction, so a
    slow endpoint holds no lock."""
    task = (
        WritingTask.objects.select_related("run__simulator", "character", "scenario")
        .filter(pk=task_id, state=TaskState.AWAITING_FOLLOWUP)
        .first()
    )
    if task is None or task.run.simulator is None:
        return "skipped"
    try:
        turn = simulate_followup(
            endpoint=task.run.simulator,
            character=task.character,
            question_r1=task.scenario.question,
            answer_r1=task.answer_r1,
        )
    except (CallFailed, EmptyFollowup, EndpointKeyMissing) as error:
        # Shown to the writer with a retry: a key set since (or a server back up) lets the
        # retry through, and without the error set the page would wait for ever.
        WritingTask.objects.filter(pk=task.pk, state=TaskState.AWAITING_FOLLOWUP).update(
            followup_error=str(error)[:1000]
        )
        return "failed"
    with transaction.atomic():
        task = WritingTask.objects.select_for_update().get(pk=task.pk)
        if task.state != TaskState.AWAITING_FOLLOWUP:
            return "skipped"
        _followup_ready(task, turn.text[:NOTE_MAX_CHARS], timezone.now())
        task.followup_prompt = turn.prompt
        task.save()
    return "done"


@transaction.atomic
def followup_retry(*, user, token: str) -> WritingTask:
    task = own_task_for_update(user=user, token=token)
    if task.state != TaskState.AWAITING_FOLLOWUP or not task.followup_error:
        raise WritingError("no_failure", _("The follow-up is not stuck."))
    task.followup_error = ""
    task.save(update_fields=["followup_error"])
    enqueue.on_commit(FOLLOWUP_SIMULATE_TASK, task.pk, long_running=True)
    return task


def user_role_character_ids(user) -> set[int]:
    """Who may play the user: approved writers, for the characters they know."""
    return writer_character_ids(user)


@transaction.atomic
def followup_next(*, user) -> WritingTask | None:
    """A task waiting for a person to play the user, never the person's own answer."""
    now = timezone.now()
    held = (
        WritingTask.objects.filter(
            followup_writer=user,
            state=TaskState.AWAITING_FOLLOWUP,
            followup_expires_at__gt=now,
        )
        .select_related("run", "character", "scenario")
        .first()
    )
    if held is not None:
        return held
    task = (
        WritingTask.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("run", "character", "scenario")
        .filter(
            run__in=open_runs(now),
            run__followup_mode=FollowupMode.PERSON,
            state=TaskState.AWAITING_FOLLOWUP,
            character_id__in=user_role_character_ids(user),
        )
        .filter(Q(followup_writer__isnull=True) | Q(followup_expires_at__lte=now))
        .exclude(writer=user)
        .order_by("submitted_at", "leased_at", "pk")
        .first()
    )
    if task is None:
        return None
    task.followup_writer = user
    task.followup_expires_at = now + timedelta(minutes=task.run.lease_minutes)
    task.save(update_fields=["followup_writer", "followup_expires_at"])
    return task


@transaction.atomic
def followup_submit(*, user, followup_token: str, text: str) -> WritingTask:
    task = (
        WritingTask.objects.select_for_update(of=("self",))
        .select_related("run")
        .filter(followup_token=followup_token, followup_writer=user)
        .first()
    )
    if task is None:
        raise WritingError("not_yours", _("This follow-up is not assigned to you."))
    now = timezone.now()
    # The same bounds as the writers' answers: a reply of a word or two is not the turn a
    # rater will read as the user's (the dataset's shortest is over 50 characters).
    question = clean_text(
        text,
        limit=task.run.max_chars,
        min_chars=task.run.min_chars,
        field=_("The user's follow-up"),
    )
    if task.state != TaskState.AWAITING_FOLLOWUP and question == task.question_r2:
        return task  # sent twice (a double click, a second tab): saved once
    if task.state != TaskState.AWAITING_FOLLOWUP or task.followup_expires_at <= now:
        raise WritingError(
            "followup_gone", _("This follow-up is no longer yours to write. Nothing was saved.")
        )
    _followup_ready(task, question, now)
    task.save()
    return task


# A follow-up the simulator has not written this long after round 1 was lost on its way
# (the broker down when it was sent); the beat asks again.
FOLLOWUP_LOST_AFTER = timedelta(minutes=5)


def followups_waiting_resume() -> list[int]:
    """Send again the simulator's follow-ups that have waited `FOLLOWUP_LOST_AFTER`
    without an answer or an error. A follow-up asked twice is written once: the second
    finds the task no longer waiting."""
    cutoff = timezone.now() - FOLLOWUP_LOST_AFTER
    waiting = WritingTask.objects.filter(
        state=TaskState.AWAITING_FOLLOWUP,
        followup_error="",
        run__followup_mode=FollowupMode.SIMULATOR,
        leased_at__lt=cutoff,
    ).only("pk", "leased_at", "seconds_r1")
    lost = [
        task.pk
        for task in waiting
        # Round 1 was handed in `seconds_r1` after the lease began.
        if task.leased_at + timedelta(seconds=task.seconds_r1 or 0) < cutoff
    ]
    return [pk for pk in lost if enqueue.send(FOLLOWUP_SIMULATE_TASK, pk)]
