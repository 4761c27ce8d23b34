"""Batches that end without a code: a participant who returns (leaves the study: their own
"Leave" button, the panel's status event, or staff) and one who times out (the panel's
status event, or the beat job once their deadline has passed). Either frees the
participant's live leases at once, so that the items they held go to someone else now
rather than when the leases would have expired, and gives their place back
(`selectors.places_taken` counts neither state)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation
from annotation.models import AuditAction
from annotation.services import audit

from ..models import Participant, ParticipantState
from .errors import PanelError
from .locks import participant_locked

# Who ended the batch, recorded in the audit note: the participant's "Leave" button, the
# panel's signed status event, staff, or the deadline (the beat job).
SOURCES = ("participant", "panel", "staff", "deadline")
# Participants timed out by one run of the beat job; the next run, a minute later, takes
# the rest (a backlog after an outage clears in a few runs, each a short transaction each).
TIME_OUT_BATCH = 500


def _source_checked(source) -> str:
    if source not in SOURCES:
        raise PanelError(
            "source", _("Unknown source of the outcome: %(source)s.") % {"source": source}
        )
    return source


def batch_end(locked: Participant, state: str, *, actor, source: str) -> Participant:
    """End a started batch, locked by the caller, in `state` (returned or timed out): leases
    back to the pool, place freed, audited."""
    released = annotation.annotator_leases_release(annotator=locked.user)
    before = {"state": locked.state}
    locked.state = state
    locked.finished_at = timezone.now()
    locked.save(update_fields=["state", "finished_at"])
    audit.record(
        actor=actor,
        action=AuditAction.PANEL_OUTCOME,
        target=locked,
        target_label=locked.user.annotator_profile.pseudonym,
        study=locked.panel_study.study,
        before=before,
        after={"state": locked.state},
        note=f"{source}; live leases released: {released}",
    )
    return locked


def _finished(locked: Participant) -> PanelError:
    return PanelError(
        "finished",
        _("This participant's batch is already over (%(state)s); nothing was changed.")
        % {"state": locked.get_state_display()},
    )


@transaction.atomic
def participant_return(*, participant: Participant, actor=None, source: str) -> Participant:
    """The participant leaves the study: state `returned`, no code, their live leases
    freed at once and their place given back. A participant whose batch is already over
    (completed, screened out, timed out, returned) is left as they are: refused with
    code "finished", which names their state."""
    source = _source_checked(source)
    locked = participant_locked(participant)
    if locked.state != ParticipantState.STARTED:
        raise _finished(locked)
    return batch_end(locked, ParticipantState.RETURNED, actor=actor, source=source)


@transaction.atomic
def participant_time_out_now(*, participant: Participant, actor=None, source: str) -> Participant:
    """End the participant's batch as timed out now, whatever our own deadline says (the
    panel's clock decided: Prolific timed the submission out), freeing their leases. A
    participant whose batch is over is refused with code "finished", unchanged."""
    source = _source_checked(source)
    locked = participant_locked(participant)
    if locked.state != ParticipantState.STARTED:
        raise _finished(locked)
    return batch_end(locked, ParticipantState.TIMED_OUT, actor=actor, source=source)


def participants_overdue_time_out(*, now=None, most: int = TIME_OUT_BATCH) -> list[int]:
    """Beat: every started participant whose deadline has passed is timed out, their
    leases freed; the ids of those timed out. Idempotent: a participant timed out by
    another process (their own next request, a second beat run) in the meantime is found
    finished under the lock and skipped."""
    now = now or timezone.now()
    overdue = list(
        Participant.objects.filter(state=ParticipantState.STARTED, deadline__lte=now)
        .order_by("deadline")
        .values_list("pk", flat=True)[:most]
    )
    timed_out = []
    for pk in overdue:
        try:
            participant_time_out_now(participant=Participant(pk=pk), actor=None, source="deadline")
        except PanelError:
            continue
        timed_out.append(pk)
    return timed_out
