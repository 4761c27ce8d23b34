"""Taking up again a lease that ran out while the annotator was away.

A rater who leaves the rating page open over a break, or until the next day, comes back to
a lease past its time. Refusing it would throw away every rating they typed, and the item
could never come back to them (one lease per annotator and item). So a lease that ran out
is renewed, with the same token (the page's draft is kept under it), whenever giving it
now would be allowed anyway: the study is open, the annotator may still rate its
character there, and the item still has room under its overlap. Otherwise it stays
refused, as before.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from ..models import Assignment, AssignmentState, Item, StudyStatus
from ..selectors.eligibility import studies_with_room


@transaction.atomic
def lease_renew(*, user, assignment: Assignment) -> bool:
    """Renew `assignment` (this annotator's lease, read with its item and study) if it
    ran out and could be given now; True, with `assignment` updated, if it was. A lease
    given back on purpose (a skip, a submission) is never renewed, nor is one whose item
    has filled up meanwhile."""
    now = timezone.now()
    if assignment.annotator_id != user.pk or assignment.expires_at > now:
        return False
    if assignment.state not in (AssignmentState.ACTIVE, AssignmentState.EXPIRED):
        return False
    study = assignment.item.study
    if study.status != StudyStatus.OPEN:
        return False
    allowed = studies_with_room(user, now, only_study=study, with_progress=False)
    if not any(
        s.pk == study.pk and assignment.item.character_id in s.character_ids for s in allowed
    ):
        # No longer approved for the character, removed from the study, or over a cap.
        return False
    # The item's row is locked while its room is counted, as when a lease is given.
    locked = (
        Item.objects.select_for_update()
        .filter(pk=assignment.item_id)
        .values_list("judgment_count", "is_gold")
        .first()
    )
    if locked is None:
        return False
    judgment_count, is_gold = locked
    if not is_gold:
        live = (
            Assignment.objects.filter(
                item_id=assignment.item_id, state=AssignmentState.ACTIVE, expires_at__gt=now
            )
            .exclude(pk=assignment.pk)
            .count()
        )
        if judgment_count + live >= study.overlap:
            return False
    expires_at = now + timedelta(minutes=study.lease_minutes)
    renewed = Assignment.objects.filter(
        pk=assignment.pk,
        state__in=[AssignmentState.ACTIVE, AssignmentState.EXPIRED],
        expires_at__lte=now,
    ).update(state=AssignmentState.ACTIVE, expires_at=expires_at)
    if renewed:
        assignment.state, assignment.expires_at = AssignmentState.ACTIVE, expires_at
    return bool(renewed)
