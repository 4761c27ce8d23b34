"""Staff review of handed-in dialogues: accept (the dialogue becomes two ordinary answers
of the run's source), return to the writer with a note, or correct. Each is audited."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import AnnotatorProfile, AuditAction
from annotation.services import audit
from common.text import plain_text
from dialogues.services import answer_put

from ..models import TaskState, WritingTask
from .errors import WritingError
from .text import NOTE_MAX_CHARS, clean_text


def _task_label(task: WritingTask) -> str:
    return f"{task.run.name} / {task.character.key} / {task.scenario.number}"


def _answers_write(task: WritingTask) -> None:
    """The accepted dialogue as two ordinary answers of the run's human source, with the
    writer's pseudonym kept beside the account so that an export can name them by it."""
    pseudonym = (
        AnnotatorProfile.objects.filter(user=task.writer)
        .values_list("pseudonym", flat=True)
        .first()
        or ""
    )
    for round_, question, text in (
        (1, task.scenario.question, task.answer_r1),
        (2, task.question_r2, task.answer_r2),
    ):
        answer_put(
            character=task.character,
            scenario=task.scenario,
            source=task.run.source,
            round=round_,
            question=question,
            text=text,
            author=task.writer,
            author_label=pseudonym,
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
    note = plain_text(note, NOTE_MAX_CHARS)
    task.state = TaskState.ACCEPTED
    task.reviewed_by = reviewer
    task.reviewed_at = timezone.now()
    task.review_note = note
    task.save()
    _answers_write(task)
    audit.record(
        actor=reviewer,
        action=AuditAction.WRITING_ACCEPT,
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
        action=AuditAction.WRITING_RETURN,
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
        action=AuditAction.WRITING_EDIT,
        target=task,
        target_label=_task_label(task),
        before=before,
        after=after,
        note=plain_text(note, NOTE_MAX_CHARS),
    )
    return task
