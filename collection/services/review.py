"""Staff review of flagged answers: accept as is or edited, or discard and ask the model
again. Every decision is kept as an `AnswerEdit`."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import AuditAction
from annotation.services import audit
from common import enqueue
from common.text import plain_text

from ..models import AnswerEdit, GeneratedAnswer, ReviewStatus, RunStatus, SimulatedFollowup
from .cells import accept_into_source
from .errors import CollectionError
from .runs import CELL_COLLECT_TASK

_TRAIL = {
    "accept": AuditAction.COLLECTION_ACCEPT,
    "edit": AuditAction.COLLECTION_EDIT,
    "regenerate": AuditAction.COLLECTION_REGENERATE,
}


def _audit(*, generated_answer: GeneratedAnswer, editor, action: str, **texts) -> AnswerEdit:
    """The decision as an `AnswerEdit` (the run's own history) and in the staff's audit
    trail, where study managers read every staff action."""
    before = {"text": texts["text_before"]} if "text_before" in texts else {}
    after = {"text": texts["text_after"]} if "text_after" in texts else {}
    audit.record(
        actor=editor,
        action=_TRAIL[action],
        target=generated_answer,
        target_label=f"{generated_answer.run.source.slug} / {generated_answer}",
        before=before,
        after=after,
    )
    return AnswerEdit.objects.create(
        generated_answer=generated_answer,
        run=generated_answer.run,
        cell=str(generated_answer),
        editor=editor if editor is not None and editor.is_authenticated else None,
        action=action,
        **texts,
    )


def _flagged(generated: GeneratedAnswer) -> GeneratedAnswer:
    generated = GeneratedAnswer.objects.select_for_update().get(pk=generated.pk)
    if generated.review_status != ReviewStatus.FLAGGED:
        raise CollectionError("not_flagged", "this answer is not waiting for review")
    return generated


def generated_answer_accept(*, generated: GeneratedAnswer, by, text: str | None = None):
    """Accept a flagged answer as it is or with staff's edit (audited)."""
    with transaction.atomic():
        generated = _flagged(generated)
        if text is not None:
            text = plain_text(text)
            if not text:
                raise CollectionError("empty_text", _("An accepted answer cannot be empty."))
            if text != generated.text:
                _audit(
                    generated_answer=generated,
                    editor=by,
                    action="edit",
                    text_before=generated.text,
                    text_after=text,
                )
                generated.text = text
        _audit(generated_answer=generated, editor=by, action="accept")
        generated.review_status = ReviewStatus.ACCEPTED
        generated.reviewed_at = timezone.now()
        generated.reviewed_by = by
        accept_into_source(generated)
        generated.save()
    return generated


def generated_answer_regenerate(*, generated: GeneratedAnswer, by) -> None:
    """Discard a flagged answer and ask the model again. A round-1 answer is the context
    of round 2, so its round 2 and follow-up go too, unless round 2 was already accepted."""
    with transaction.atomic():
        generated = _flagged(generated)
        cell = {
            "source": generated.source,
            "character": generated.character,
            "scenario": generated.scenario,
        }
        if generated.round == 1:
            second = GeneratedAnswer.objects.filter(round=2, **cell).first()
            if second is not None and second.review_status == ReviewStatus.ACCEPTED:
                raise CollectionError(
                    "round_2_accepted",
                    _(
                        "Round 2 of this dialogue is already accepted, and it answers this "
                        "round-1 text: it cannot be generated again."
                    ),
                )
            if second is not None:
                second.delete()
            SimulatedFollowup.objects.filter(**cell).delete()
        _audit(
            generated_answer=generated, editor=by, action="regenerate", text_before=generated.text
        )
        generated.delete()
        run = generated.run
        if run.status in (RunStatus.FINISHED, RunStatus.CANCELLED, RunStatus.FAILED):
            run.status = RunStatus.RUNNING
            run.finished_at = None
            run.save(update_fields=["status", "finished_at"])
        # With the broker down, the run is running again and `runs_stalled_resume` sends it.
        enqueue.on_commit(
            CELL_COLLECT_TASK,
            run.pk,
            generated.character_id,
            generated.scenario_id,
            long_running=True,
        )
