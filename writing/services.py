"""Writes for fan writing: applications, runs, leases on tasks, the two rounds, the user's
follow-up and staff review. Keyword-only, one transaction each; a refusal raises
`WritingError` and changes nothing."""

import difflib
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import AnnotatorProfile, Qualification, QualificationStatus
from annotation.services import audit
from dialogues.models import Answer, Character, Scenario, Source, SourceKind

from .models import (
    ApplicationStatus,
    FollowupMode,
    RunStatus,
    TaskState,
    WriterApplication,
    WritingRun,
    WritingTask,
)

SAMPLE_MAX_CHARS = 2000
NOTE_MAX_CHARS = 2000
# Answers this similar to another source's answer for the same cell are flagged:
# typed from scratch, two fans almost never come this close.
NEAR_DUPLICATE_RATIO = 0.8


class WritingError(Exception):
    """A request the rules refuse; nothing was changed. `code` is stable for tests."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)


def clean_text(value, *, limit: int, field: str, min_chars: int = 1) -> str:
    """Typed text as stored, or WritingError. NUL characters are refused rather than
    dropped: they never come from a keyboard, so the text is not what the person meant."""
    text = str(value if value is not None else "")
    if "\x00" in text:
        raise WritingError(
            "nul", _("%(field)s contains a NUL character; nothing was saved.") % {"field": field}
        )
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise WritingError("empty", _("%(field)s is empty; nothing was saved.") % {"field": field})
    if len(text) < min_chars:
        raise WritingError(
            "too_short",
            _("%(field)s needs at least %(min)d characters; it has %(n)d. Nothing was saved.")
            % {"field": field, "min": min_chars, "n": len(text)},
        )
    if len(text) > limit:
        raise WritingError(
            "too_long",
            _("%(field)s may have at most %(max)d characters; it has %(n)d. Nothing was saved.")
            % {"field": field, "max": limit, "n": len(text)},
        )
    return text


# --- writers -----------------------------------------------------------------------------


def screened_character_ids(user) -> set[int]:
    """Characters whose quiz this person passed (screening as for annotators)."""
    return set(
        Qualification.objects.filter(
            profile__user=user,
            profile__consented_at__isnull=False,
            status__in=[QualificationStatus.PASSED, QualificationStatus.APPROVED],
        ).values_list("character_id", flat=True)
    )


def writer_character_ids(user) -> set[int]:
    return set(
        WriterApplication.objects.filter(user=user, status=ApplicationStatus.APPROVED).values_list(
            "character_id", flat=True
        )
    )


@transaction.atomic
def writer_apply(*, user, character: Character, sample: str) -> WriterApplication:
    if character.pk not in screened_character_ids(user):
        raise WritingError(
            "not_screened", _("Pass the screening quiz for this character before applying.")
        )
    sample = clean_text(sample, limit=SAMPLE_MAX_CHARS, field=_("The writing sample"))
    application = WriterApplication.objects.filter(user=user, character=character).first()
    if application is not None and application.status != ApplicationStatus.REJECTED:
        raise WritingError("already_applied", _("You have already applied for this character."))
    if application is None:
        return WriterApplication.objects.create(user=user, character=character, sample=sample)
    application.sample = sample
    application.status = ApplicationStatus.PENDING
    application.save(update_fields=["sample", "status"])
    return application


@transaction.atomic
def writer_review(
    *, application: WriterApplication, reviewer, approve: bool, note: str = ""
) -> WriterApplication:
    application = WriterApplication.objects.select_for_update().get(pk=application.pk)
    note = str(note or "").replace("\x00", "").strip()[:NOTE_MAX_CHARS]
    before = {"status": application.status, "review_note": application.review_note}
    application.status = ApplicationStatus.APPROVED if approve else ApplicationStatus.REJECTED
    application.reviewed_by = reviewer
    application.reviewed_at = timezone.now()
    application.review_note = note
    application.save()
    profile = AnnotatorProfile.objects.filter(user=application.user).first()
    audit.record(
        actor=reviewer,
        action="writer.approve" if approve else "writer.reject",
        target=application,
        target_label=f"{profile.pseudonym if profile else application.user_id} / "
        f"{application.character.key}",
        before=before,
        after={"status": application.status, "review_note": note},
        note=note,
    )
    return application


# --- runs --------------------------------------------------------------------------------


@transaction.atomic
def run_create(
    *,
    name: str,
    source_slug: str,
    characters: list[Character],
    scenarios: list[Scenario],
    followup_mode: str = FollowupMode.PERSON,
    simulator=None,
    deadline=None,
    writers_per_character: int = 0,
    lease_minutes: int = 60,
    min_chars: int = 10,
    max_chars: int = 400,
    display_name: str = "",
) -> WritingRun:
    """A run and one task per character x scenario; its human source is created here and
    must be new, so that a run's answers never mix with imported ones."""
    if not characters or not scenarios:
        raise WritingError("empty_run", _("Choose at least one character and one scenario."))
    if followup_mode == FollowupMode.SIMULATOR and simulator is None:
        raise WritingError("no_simulator", _("A simulated follow-up needs a simulator endpoint."))
    if not 1 <= min_chars <= max_chars:
        raise WritingError("bad_limits", _("The length limits are not a valid range."))
    if WritingRun.objects.filter(name=name).exists():
        raise WritingError("name_taken", _("A run with this name already exists."))
    if Source.objects.filter(slug=source_slug).exists():
        raise WritingError("source_exists", _("A source with this slug already exists."))
    source = Source.objects.create(
        slug=source_slug, kind=SourceKind.HUMAN, display_name=display_name or source_slug
    )
    run = WritingRun.objects.create(
        name=name,
        source=source,
        followup_mode=followup_mode,
        simulator=simulator,
        deadline=deadline,
        writers_per_character=writers_per_character,
        lease_minutes=lease_minutes,
        min_chars=min_chars,
        max_chars=max_chars,
    )
    run.characters.set(characters)
    run.scenarios.set(scenarios)
    WritingTask.objects.bulk_create(
        WritingTask(run=run, character=character, scenario=scenario)
        for character in characters
        for scenario in scenarios
    )
    return run


# --- the writer's tasks ------------------------------------------------------------------


def _open_runs(now):
    return WritingRun.objects.filter(status=RunStatus.OPEN).filter(
        Q(deadline__isnull=True) | Q(deadline__gt=now)
    )


def current_task(user) -> WritingTask | None:
    """The task the writer is on: one started and not yet handed in (or returned)."""
    now = timezone.now()
    return (
        WritingTask.objects.filter(writer=user, run__in=_open_runs(now))
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
    """Characters of the run that already have their allowed number of other writers."""
    if not run.writers_per_character:
        return set()
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
    for run in _open_runs(now).filter(characters__in=character_ids).distinct():
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


def _own_task_for_update(*, user, token: str) -> WritingTask:
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
    task = _own_task_for_update(user=user, token=token)
    now = timezone.now()
    if task.state == TaskState.ROUND_1 and task.lease_expires_at <= now:
        raise WritingError(
            "lease_expired",
            _("Your time for this task ran out and it went back to the pool. Nothing was saved."),
        )
    if task.state != TaskState.ROUND_1:
        raise WritingError("not_round_1", _("Round 1 of this task is already handed in."))
    task.answer_r1 = clean_text(
        text, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
    _flag(task, 1, task.answer_r1, pastes)
    task.seconds_r1 = (now - task.leased_at).total_seconds()
    task.state = TaskState.AWAITING_FOLLOWUP
    task.lease_expires_at = None
    task.save()
    if task.run.followup_mode == FollowupMode.SIMULATOR:
        from .tasks import followup_simulate

        followup_simulate.delay_on_commit(task.pk)
    return task


@transaction.atomic
def round_2_submit(*, user, token: str, text: str, pastes: int = 0) -> WritingTask:
    """Hand in round 2; a returned task is handed in again from here, both rounds."""
    task = _own_task_for_update(user=user, token=token)
    if task.state not in (TaskState.ROUND_2, TaskState.RETURNED):
        raise WritingError("not_round_2", _("This task is not waiting for your round 2."))
    task.answer_r2 = clean_text(
        text, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
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
    task = _own_task_for_update(user=user, token=token)
    if task.state != TaskState.RETURNED:
        raise WritingError("not_returned", _("This task was not returned to you."))
    task.answer_r1 = clean_text(
        answer_r1, limit=task.run.max_chars, min_chars=task.run.min_chars, field=_("Your answer")
    )
    _flag(task, 1, task.answer_r1, pastes)
    task.save()
    return round_2_submit(user=user, token=token, text=answer_r2)


# --- the user's follow-up ----------------------------------------------------------------


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
    from collection.client import CallFailed
    from collection.simulator import EmptyFollowup, simulate_followup

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
    except (CallFailed, EmptyFollowup) as error:
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
    task = _own_task_for_update(user=user, token=token)
    if task.state != TaskState.AWAITING_FOLLOWUP or not task.followup_error:
        raise WritingError("no_failure", _("The follow-up is not stuck."))
    task.followup_error = ""
    task.save(update_fields=["followup_error"])
    from .tasks import followup_simulate as followup_simulate_task

    followup_simulate_task.delay_on_commit(task.pk)
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
            run__in=_open_runs(now),
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
    if task.state != TaskState.AWAITING_FOLLOWUP or task.followup_expires_at <= now:
        raise WritingError(
            "followup_gone", _("This follow-up is no longer yours to write. Nothing was saved.")
        )
    question = clean_text(text, limit=task.run.max_chars, field=_("The user's follow-up"))
    _followup_ready(task, question, now)
    task.save()
    return task


# --- staff review ------------------------------------------------------------------------


def _task_label(task: WritingTask) -> str:
    return f"{task.run.name} / {task.character.key} / {task.scenario.number}"


def _answers_write(task: WritingTask) -> None:
    """The accepted dialogue as two ordinary answers of the run's human source."""
    for round_, question, text in (
        (1, task.scenario.question, task.answer_r1),
        (2, task.question_r2, task.answer_r2),
    ):
        Answer.objects.update_or_create(
            character=task.character,
            scenario=task.scenario,
            source=task.run.source,
            round=round_,
            defaults={"question": question, "text": text, "author": task.writer},
        )


def _reviewable_for_update(task: WritingTask, states) -> WritingTask:
    task = (
        WritingTask.objects.select_for_update(of=("self",))
        .select_related("run__source", "character", "scenario", "writer")
        .get(pk=task.pk)
    )
    if task.state not in states:
        raise WritingError(
            "not_reviewable", _("This task is not waiting for review; nothing was changed.")
        )
    return task


@transaction.atomic
def task_accept(*, task: WritingTask, reviewer, note: str = "") -> WritingTask:
    task = _reviewable_for_update(task, [TaskState.SUBMITTED])
    note = str(note or "").replace("\x00", "").strip()[:NOTE_MAX_CHARS]
    task.state = TaskState.ACCEPTED
    task.reviewed_by = reviewer
    task.reviewed_at = timezone.now()
    task.review_note = note
    task.save()
    _answers_write(task)
    audit.record(
        actor=reviewer,
        action="writing.accept",
        target=task,
        target_label=_task_label(task),
        before={"state": TaskState.SUBMITTED},
        after={"state": task.state},
        note=note,
    )
    return task


@transaction.atomic
def task_return(*, task: WritingTask, reviewer, note: str) -> WritingTask:
    task = _reviewable_for_update(task, [TaskState.SUBMITTED])
    note = clean_text(note, limit=NOTE_MAX_CHARS, field=_("The note to the writer"))
    task.state = TaskState.RETURNED
    task.reviewed_by = reviewer
    task.reviewed_at = timezone.now()
    task.review_note = note
    task.save()
    audit.record(
        actor=reviewer,
        action="writing.return",
        target=task,
        target_label=_task_label(task),
        before={"state": TaskState.SUBMITTED},
        after={"state": task.state},
        note=note,
    )
    return task


@transaction.atomic
def task_edit(
    *, task: WritingTask, reviewer, answer_r1: str, question_r2: str, answer_r2: str, note: str = ""
) -> WritingTask:
    """Staff correct a handed-in or accepted dialogue; the trail keeps both versions, and an
    accepted dialogue's answers change with it."""
    task = _reviewable_for_update(task, [TaskState.SUBMITTED, TaskState.ACCEPTED])
    limit = task.run.max_chars
    after = {
        "answer_r1": clean_text(answer_r1, limit=limit, field=_("Round 1 answer")),
        "question_r2": clean_text(question_r2, limit=limit, field=_("The user's follow-up")),
        "answer_r2": clean_text(answer_r2, limit=limit, field=_("Round 2 answer")),
    }
    before = {field: getattr(task, field) for field in after}
    before, after = audit.changes(before, after)
    if not after:
        raise WritingError("unchanged", _("Nothing was changed."))
    for field, value in after.items():
        setattr(task, field, value)
    task.save()
    if task.state == TaskState.ACCEPTED:
        _answers_write(task)
    audit.record(
        actor=reviewer,
        action="writing.edit",
        target=task,
        target_label=_task_label(task),
        before=before,
        after=after,
        note=str(note or "").replace("\x00", "").strip()[:NOTE_MAX_CHARS],
    )
    return task


def tasks_create_missing(*, run: WritingRun) -> int:
    """Cells added to a run after it was created (in the admin) get their tasks."""
    existing = set(WritingTask.objects.filter(run=run).values_list("character_id", "scenario_id"))
    missing = [
        WritingTask(run=run, character=character, scenario=scenario)
        for character in run.characters.all()
        for scenario in run.scenarios.all()
        if (character.pk, scenario.pk) not in existing
    ]
    # ignore_conflicts: a concurrent save of the same run may have added some already.
    WritingTask.objects.bulk_create(missing, ignore_conflicts=True)
    return len(missing)
