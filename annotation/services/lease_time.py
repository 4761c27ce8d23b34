"""How long a lease lasts: kept longer while the annotator is still at the item, and
marked expired by the beat once its time is over.

A lease holds one of an item's places (`leases`): while it is live nobody else is given
the item. The rating page says how long it is reserved and, near the end, offers to keep
it; a lease that has run out cannot be kept, since its place may already be someone
else's (ratings sent after it are refused). Keeping is bounded, so that a tab left open
does not hold an item other annotators need for ever."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.formats import time_format
from django.utils.translation import gettext as _

from ..models import Assignment, AssignmentState
from .errors import AnnotationError
from .leases import active_assignment_for_update

# The longest an item stays reserved from when it was served, in leases: three times the
# study's lease (90 minutes with the default 30) is longer than anyone rates one item,
# and short enough that an abandoned tab gives the item back within the study's day.
KEPT_AT_MOST = 3


def kept_until_limit(assignment: Assignment):
    """The latest moment this lease can be kept to."""
    minutes = assignment.item.study.lease_minutes
    return assignment.served_at + timedelta(minutes=KEPT_AT_MOST * minutes)


@transaction.atomic
def lease_keep(*, user, token: str) -> Assignment:
    """Keep the annotator's live lease for another lease's time from now (no later than
    `kept_until_limit`), or raise AnnotationError saying why not and change nothing. The
    lease row is locked as a submission locks it, so a keep and a submission of the same
    lease happen one after the other; the item's place was the lease's all along, so its
    overlap, the annotator's caps and a panel batch count it as before. The lock takes the
    item's row too (`active_assignment_for_update` reads the lease with its item: FOR
    UPDATE locks every row it joins), and whether the lease is live is decided once it is
    granted: a keep that waited on another annotator's lease of the item while its time
    ran out is refused, never given the place that lease took. (A panel participant whose
    time is up never gets here: the view sends them to their end.)"""
    assignment = active_assignment_for_update(user=user, token=token)
    now = timezone.now()
    limit = kept_until_limit(assignment)
    if assignment.expires_at >= limit:
        raise AnnotationError(
            "kept_long",
            _(
                "This item cannot be kept longer: other annotators are waiting for it."
                " Send your ratings before %(time)s."
            )
            % {"time": time_format(timezone.localtime(assignment.expires_at))},
        )
    lease_minutes = assignment.item.study.lease_minutes
    assignment.expires_at = min(now + timedelta(minutes=lease_minutes), limit)
    assignment.save(update_fields=["expires_at"])
    return assignment


def leases_expire() -> int:
    """Housekeeping for the beat schedule: mark leases past their expiry. Correctness never
    depends on it; every check compares `expires_at` with the clock."""
    return Assignment.objects.filter(
        state=AssignmentState.ACTIVE, expires_at__lte=timezone.now()
    ).update(state=AssignmentState.EXPIRED)
