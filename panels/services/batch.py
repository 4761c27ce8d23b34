"""A participant's batch on a study without the character quiz: admitted for the
characters they choose, confined to the panel's study, and ended by exactly one outcome
(completion with its code, or a time-out)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation
from annotation.models import Judgment

from ..models import Participant, ParticipantState
from ..selectors import check_owed
from .errors import PanelError
from .locks import participant_locked
from .outcomes import batch_end
from .review import participant_review_refresh

ADMIT_NOTE = "panel participant: characters chosen, no quiz (the study's panel settings)"


def judgments_given(participant: Participant) -> int:
    return Judgment.objects.filter(
        annotator_id=participant.user_id, study_id=participant.panel_study.study_id
    ).count()


@transaction.atomic
def participant_consent(*, participant: Participant) -> Participant:
    """The participant agreed to the site's consent text (recorded by annotation)."""
    annotation.consent_give(user=participant.user)
    return participant


@transaction.atomic
def participant_admit(*, participant: Participant, characters) -> Participant:
    """Make the participant an approved annotator for exactly `characters` (no staff step:
    the study's panel settings say so), rating only the panel's study, at most the batch's
    number of items. Recorded as the platform's doing."""
    locked = participant_locked(participant)
    panel = locked.panel_study
    if panel.quiz:
        # Its participants are admitted by their quizzes (`screening`), not by choosing.
        raise PanelError("quiz", _("On this study, characters are admitted by their quiz."))
    if locked.state != ParticipantState.STARTED:
        raise PanelError("finished", _("Your part of this study is over."))
    if timezone.now() >= locked.deadline:
        raise PanelError("timed_out", _("Your time for this study is up."))
    study = panel.study
    if study.memberships.filter(annotator_id=locked.user_id).exists():
        raise PanelError("already_admitted", _("You have already chosen your characters."))
    characters = list(characters or [])
    if not characters:
        raise PanelError("characters", _("Choose at least one character you know."))
    allowed = set(study.characters.values_list("pk", flat=True))
    if any(character.pk not in allowed for character in characters):
        raise PanelError("characters", _("Choose characters of this study only."))
    try:
        annotation.annotator_admit(
            annotator=locked.user,
            characters=characters,
            actor=None,
            members_only=True,
            note=ADMIT_NOTE,
        )
        annotation.membership_add(
            study=study,
            annotator=locked.user,
            actor=None,
            cap=panel.items_per_participant,
            skips_allowed=panel.skips_per_participant,
            characters=characters,
        )
    except annotation.AnnotationError as refusal:
        raise PanelError(refusal.code, refusal.message) from refusal
    return locked


@transaction.atomic
def participant_complete(*, participant: Participant) -> Participant:
    """Give the completion code, once: a second call returns the participant with the
    same code. Refused, changing nothing, before the batch's last judgment or while an
    attention check is owed."""
    locked = participant_locked(participant)
    if locked.state == ParticipantState.COMPLETED:
        return locked
    if locked.state != ParticipantState.STARTED:
        raise PanelError("finished", _("Your part of this study is over."))
    wanted = locked.panel_study.items_per_participant
    given = judgments_given(locked)
    if given < wanted:
        raise PanelError(
            "not_done",
            _(
                "The completion code comes after your last item: you have rated "
                "%(given)d of %(wanted)d. Nothing was changed."
            )
            % {"given": given, "wanted": wanted},
        )
    if check_owed(locked) is not None:
        raise PanelError(
            "check_owed",
            _("One question is still to be answered before your code. Nothing was changed."),
        )
    locked.state = ParticipantState.COMPLETED
    locked.code = locked.panel_study.completion_code
    locked.finished_at = timezone.now()
    locked.save(update_fields=["state", "code", "finished_at"])
    # Flags mark the submission for review; they never hold back the code.
    participant_review_refresh(participant=locked)
    return locked


@transaction.atomic
def participant_time_out(*, participant: Participant) -> Participant:
    """End the batch of a participant past their deadline: no code (the panel does not
    pay time-outs), their live leases back to the pool at once. Refused before the
    deadline; a participant already finished is returned as they are."""
    locked = participant_locked(participant)
    if locked.state != ParticipantState.STARTED:
        return locked
    now = timezone.now()
    if now < locked.deadline:
        raise PanelError("not_late", _("Your time for this study is not up yet."))
    return batch_end(locked, ParticipantState.TIMED_OUT, actor=None, source="deadline")
