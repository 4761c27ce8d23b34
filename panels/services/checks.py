"""Attention checks in a participant's batch: an answer recorded once per position, the
batch ended with the failed-checks code when the panel's rules allow it, and checks staff
find unclear set aside. Only these decide pay; every other quality signal marks the
participant for review (`review.participant_review_refresh`)."""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation
from annotation.models import AuditAction
from annotation.services import audit
from common.text import plain_text

from .. import checks
from ..models import CheckAnswer, PanelStudy, Participant, ParticipantState
from ..selectors import check_owed, checks_failed
from .errors import PanelError
from .locks import participant_locked
from .review import participant_review_refresh


@transaction.atomic
def check_answer(*, participant: Participant, position, check_key, chosen) -> Participant:
    """Record the participant's answer to the check owed at `position`. An answer already
    recorded there (a double tap, a replayed post) changes nothing; a post for another
    position, another check or an answer the check does not offer is refused. Reaching
    the study's number of failed checks ends the batch (`_fail`)."""
    if isinstance(position, bool) or not isinstance(position, int):
        raise PanelError(
            "not_due", _("This question is not the one due now. Nothing was recorded.")
        )
    locked = participant_locked(participant)
    if CheckAnswer.objects.filter(participant=locked, position=position).exists():
        return locked
    if locked.state != ParticipantState.STARTED:
        raise PanelError("finished", _("Your part of this study is over."))
    if timezone.now() >= locked.deadline:
        raise PanelError("timed_out", _("Your time for this study is up."))
    owed = check_owed(locked)
    if owed is None or owed[0] != position:
        raise PanelError(
            "not_due", _("This question is not the one due now. Nothing was recorded.")
        )
    check = owed[1]
    if check.key != check_key:
        raise PanelError(
            "changed",
            _(
                "This question has been replaced; please answer the one shown. Nothing was recorded."
            ),
        )
    if not isinstance(chosen, str) or not checks.is_choice(check, chosen):
        raise PanelError(
            "choice", _("Please choose one of the answers shown. Nothing was recorded.")
        )
    try:
        with transaction.atomic():
            CheckAnswer.objects.create(
                participant=locked,
                position=position,
                check_key=check.key,
                chosen=chosen,
                passed=checks.passes(check, chosen),
            )
    except IntegrityError:
        # The same answer from another tab got in first (a database without row locks):
        # that one counts, this one changes nothing.
        return locked
    failed = checks_failed(locked)
    if failed >= checks.failure_threshold(locked.panel_study.minutes):
        _fail(locked, failed)
    return locked


def _fail(locked: Participant, failed: int) -> None:
    """End the batch with the failed-checks code, given once; the participant's live
    leases go back to the pool at once, so that their items wait for nobody."""
    panel = locked.panel_study
    released = annotation.annotator_leases_release(annotator=locked.user)
    locked.state = ParticipantState.FAILED_CHECKS
    locked.code = panel.failed_checks_code
    locked.finished_at = timezone.now()
    locked.save(update_fields=["state", "code", "finished_at"])
    participant_review_refresh(participant=locked)
    audit.record(
        actor=None,
        action=AuditAction.PANEL_OUTCOME,
        target=locked,
        target_label=locked.user.annotator_profile.pseudonym,
        study=panel.study,
        before={"state": ParticipantState.STARTED.value},
        after={
            "state": locked.state,
            "code": locked.code,
            "checks_failed": failed,
            "leases_released": released,
        },
    )


@transaction.atomic
def check_void(*, panel_study: PanelStudy, check_key, actor, reason) -> PanelStudy:
    """Set a check aside as unclear in this study: it is no longer shown there, and
    failing it no longer counts against anyone still rating. A participant whose batch
    already ended keeps the code they were given (a code is never taken back); staff
    decide on their submission. Voiding a check twice changes nothing the second time."""
    reason = plain_text(reason or "")
    if not reason:
        raise PanelError("reason", _("Please say why the check is unclear."))
    if check_key not in checks.BY_KEY:
        raise PanelError(
            "check_key", _("There is no attention check %(key)s.") % {"key": check_key}
        )
    locked = (
        PanelStudy.objects.select_for_update(of=("self",))
        .select_related("study")
        .get(pk=panel_study.pk)
    )
    before = list(locked.voided_checks)
    if check_key in before:
        return locked
    locked.voided_checks = [*before, check_key]
    locked.save(update_fields=["voided_checks", "updated_at"])
    panel_study.voided_checks = locked.voided_checks
    audit.record(
        actor=actor,
        action=AuditAction.PANEL_CHECK_VOID,
        target=locked,
        target_label=locked.study.slug,
        study=locked.study,
        before={"voided_checks": before},
        after={"voided_checks": locked.voided_checks},
        note=reason,
    )
    return locked
