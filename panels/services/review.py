"""Quality signals that never decide pay: a participant's flags (too fast,
straight-lining, low agreement, failed gold items) mark their submission for a person to
look at, and nothing else."""

from django.db import transaction

from ..models import Participant
from ..selectors import review_reasons_of


@transaction.atomic
def participant_review_refresh(*, participant: Participant) -> Participant:
    """Write the participant's `review_reasons` ({flag kind: count}) from their flags in
    the study; a participant with reasons is awaiting review. Called when the batch ends;
    the state, the code and the pay stay as they are."""
    reasons = review_reasons_of(participant)
    if participant.review_reasons != reasons:
        Participant.objects.filter(pk=participant.pk).update(review_reasons=reasons)
        participant.review_reasons = reasons
    return participant
