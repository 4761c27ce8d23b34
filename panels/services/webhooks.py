"""What a verified Prolific status event does here (`panels.webhooks` checked it).

Every event is kept once, by Prolific's event id (`WebhookEvent`, unique per provider and
id): a redelivery is recognised and changes nothing a second time. Then, for a
`submission.status.change` of a submission we know (by its id, the SESSION_ID the
participant's link carried):
- RETURNED: the participant returns (`participant_return`), their leases freed at once;
- TIMED-OUT: their batch ends as timed out now, leases freed;
- any other status (APPROVED, REJECTED, AWAITING REVIEW, ...): recorded only.
What does not fit changes nothing and is recorded with its outcome: an unknown
submission, one whose participant id is not the one we hold, a return or time-out of a
batch already over (we completed them first), or a status older than what we hold.

Prolific does not promise the order of events. It offers X-Timestamp to compare them by;
we keep no sending time (a `WebhookEvent` has the time we received it), so we order by
where a status stands in a submission's life instead: reserved or active, then ended
(awaiting review, returned, timed out, screened out), then decided (approved, rejected,
partially approved). An event whose status stands before one we already hold for that
submission, from an earlier event or from our own record of the participant, is stale."""

from django.db import IntegrityError, transaction

from ..models import (
    Decision,
    Participant,
    ParticipantState,
    Provider,
    WebhookEvent,
)
from ..webhooks import SUBMISSION_STATUS_CHANGE, StatusEvent
from .errors import PanelError
from .outcomes import participant_return, participant_time_out_now

RETURNED = "RETURNED"
TIMED_OUT = "TIMED-OUT"
STAGE_OF_STATUS = {
    "RESERVED": 0,
    "ACTIVE": 0,
    "AWAITING REVIEW": 1,
    "RETURNED": 1,
    "TIMED-OUT": 1,
    "SCREENED OUT": 1,
    "APPROVED": 2,
    "REJECTED": 2,
    "PARTIALLY APPROVED": 2,
}
STAGE_NAMES = {0: "active", 1: "ended", 2: "decided"}
# Outcomes of events that told us nothing true about a submission we know: their status
# is not held.
NOT_HELD = ("unknown", "ambiguous", "participant id mismatch", "stale")


def _participant_stage(participant: Participant) -> int:
    if participant.decision in (Decision.APPROVED, Decision.REJECTED):
        return 2
    return 0 if participant.state == ParticipantState.STARTED else 1


def _held_stage(event: StatusEvent, participant: Participant) -> int:
    earlier = (
        WebhookEvent.objects.filter(
            provider=Provider.PROLIFIC,
            event_type=SUBMISSION_STATUS_CHANGE,
            resource_id=event.resource_id,
        )
        .exclude(event_id=event.event_id)
        .values_list("status", "outcome")
    )
    stages = [
        STAGE_OF_STATUS.get(status, 0)
        for status, outcome in earlier
        if not outcome.startswith(NOT_HELD)
    ]
    return max([_participant_stage(participant), *stages])


def _submission_outcome(event: StatusEvent) -> str:
    found = list(
        Participant.objects.select_related("panel_study")
        .filter(session_id=event.resource_id, panel_study__provider=Provider.PROLIFIC)
        .order_by("pk")[:2]
    )
    if not found:
        return "unknown submission"
    if len(found) > 1:
        # Prolific's submission ids are unique; two participants with one is a link
        # copied by hand, and which of them the event is about cannot be told.
        return "ambiguous submission: nothing changed"
    participant = found[0]
    if event.participant_id and event.participant_id != participant.pid:
        return "participant id mismatch: nothing changed"
    stage = STAGE_OF_STATUS.get(event.status)
    held = _held_stage(event, participant)
    if stage is not None and stage < held:
        return f"stale: we hold {STAGE_NAMES[held]}"
    try:
        if event.status == RETURNED:
            participant_return(participant=participant, source="panel")
            return "returned"
        if event.status == TIMED_OUT:
            participant_time_out_now(participant=participant, source="panel")
            return "timed out"
    except PanelError as refusal:
        if refusal.code != "finished":
            raise
        participant.refresh_from_db(fields=["state"])
        return f"ignored: already {participant.state}"
    return "recorded"


@transaction.atomic
def prolific_event_receive(*, event: StatusEvent) -> tuple[str, bool]:
    """Record Prolific's event and act on it: (what it did, whether it was new). A
    redelivered event answers with what it did the first time."""
    try:
        with transaction.atomic():
            record = WebhookEvent.objects.create(
                provider=Provider.PROLIFIC,
                event_id=event.event_id,
                event_type=event.event_type,
                resource_id=event.resource_id,
                status=event.status,
            )
    except IntegrityError:
        first = WebhookEvent.objects.get(provider=Provider.PROLIFIC, event_id=event.event_id)
        return first.outcome, False
    if event.event_type == SUBMISSION_STATUS_CHANGE:
        outcome = _submission_outcome(event)
    else:
        outcome = "recorded"
    record.outcome = outcome[:64]
    record.save(update_fields=["outcome"])
    return record.outcome, True
