"""The row locks every write of a participant's batch takes."""

from ..models import Participant


def participant_locked(participant: Participant) -> Participant:
    """The participant's row, locked for the transaction, with their account, panel study
    and study read beside it. Their own row only (`of=self`): the panel's and the study's
    rows are shared by every newcomer's join and every judgment of the study, and locking
    them made a burst of arrivals queue the whole study."""
    return (
        Participant.objects.select_for_update(of=("self",))
        .select_related("user", "panel_study__study")
        .get(pk=participant.pk)
    )
