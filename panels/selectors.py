"""Reads of the panels app."""

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


# Every participant's account is named so (services.participants): the rating page, which
# asks `batch_of` before every new item, then reads nothing for anyone else.
PANEL_ACCOUNT_PREFIX = "panel-"


def batch_of(user) -> tuple[str, bool, str] | None:
    """For a panel participant: their state, whether their deadline has passed, and their
    study's slug; None for anyone else. At most one read by the user's key, and none for
    an account that is not a participant's (the annotators of the hot loop)."""
    from django.utils import timezone

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
