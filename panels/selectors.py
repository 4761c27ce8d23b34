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
