"""Reads of the panels app."""

from django.utils import timezone

from .models import GONE_STATES, PanelStudy, Participant


def panel_study_for_slug(slug: str) -> PanelStudy | None:
    return PanelStudy.objects.select_related("study").filter(study__slug=slug).first()


def places_taken(panel_study: PanelStudy) -> int:
    """People holding a place: everyone who came, but those who returned or timed out."""
    return (
        Participant.objects.filter(panel_study=panel_study).exclude(state__in=GONE_STATES).count()
    )


def participant_of(user, panel_study: PanelStudy) -> Participant | None:
    """The user's participation in this panel study, if they came from it."""
    if not user.is_authenticated:
        return None
    return Participant.objects.filter(user=user, panel_study=panel_study).first()


def participant_admitted(participant: Participant) -> bool:
    """Whether the participant has chosen their characters (is a member of the study)."""
    from annotation.models import StudyMembership

    return StudyMembership.objects.filter(
        study_id=participant.panel_study.study_id, annotator_id=participant.user_id
    ).exists()


def participant_consented(participant: Participant) -> bool:
    from annotation.models import AnnotatorProfile

    return AnnotatorProfile.objects.filter(
        user_id=participant.user_id, consented_at__isnull=False
    ).exists()


def screening_of(participant: Participant) -> list:
    """The participant's qualifications for their study's characters (on a quiz study: the
    characters they chose, each with its one quiz), in the order the quizzes come."""
    from annotation.models import Qualification

    return list(
        Qualification.objects.filter(
            profile__user_id=participant.user_id,
            character__in=participant.panel_study.study.characters.all(),
        )
        .select_related("character")
        .order_by("character_id")
    )


def quiz_untaken(qualification) -> bool:
    """A chosen character whose one quiz is still to be taken."""
    from annotation.models import QualificationStatus

    return qualification.status == QualificationStatus.CLAIMED and qualification.quiz_attempts == 0


def rated_characters(participant: Participant) -> list:
    """The characters the participant rates in the panel's study (their membership's)."""
    from annotation.models import StudyMembership

    membership = StudyMembership.objects.filter(
        study_id=participant.panel_study.study_id, annotator_id=participant.user_id
    ).first()
    return [] if membership is None else list(membership.characters.order_by("pk"))


def items_left_for(participant: Participant) -> bool:
    """Whether the panel's study may still give the participant an item.

    "Nothing left" is decided by annotation's own rule of which items a person may be
    given (`eligibility.any_item_left`: not had before, no answer seen before, below the
    overlap, their characters), with one difference from the plan the rating page
    leases from: items that others hold a live lease on count as left. Such a lease
    lapses or is released (a time-out, a return) and the item comes back, so ending the
    batch then would pay a screen-out to someone who could have completed. Only when no
    such item exists (judged by enough people, or closed to them by what they have
    seen) can waiting never help. Their own live lease is an item in hand."""
    from annotation.models import Assignment, AssignmentState
    from annotation.selectors.eligibility import any_item_left

    study = participant.panel_study.study
    if Assignment.objects.filter(
        annotator_id=participant.user_id,
        item__study=study,
        state=AssignmentState.ACTIVE,
        expires_at__gt=timezone.now(),
    ).exists():
        return True
    character_ids = [character.pk for character in rated_characters(participant)]
    return any_item_left(participant.user, study, character_ids)


def ran_out_of_items(participant: Participant) -> bool:
    """Whether a screened-out participant was screened out for want of items (after
    being admitted) rather than by the quiz (never admitted)."""
    return participant_admitted(participant)


# Every participant's account is named so (services.participants): the rating page, which
# asks `batch_of` before every new item, then reads nothing for anyone else.
PANEL_ACCOUNT_PREFIX = "panel-"


def batch_of(user) -> tuple[str, bool, str] | None:
    """For a panel participant: their state, whether their deadline has passed, and their
    study's slug; None for anyone else. At most one read by the user's key, and none for
    an account that is not a participant's (the annotators of the hot loop)."""
    if not user.username.startswith(PANEL_ACCOUNT_PREFIX):
        return None
    found = (
        Participant.objects.filter(user_id=user.pk)
        .values_list("state", "deadline", "panel_study__study__slug")
        .first()
    )
    if found is None:
        return None
    state, deadline, slug = found
    return state, timezone.now() >= deadline, slug
