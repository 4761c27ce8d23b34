"""Returns racing each other on PostgreSQL: Prolific delivering the same event twice at
once, and the participant's own "Leave" arriving with Prolific's RETURNED. One event
kept, one return, one audit entry; the others are told it happened already."""

import threading

import pytest
from django.db import connection

from annotation.models import AuditAction, AuditEvent
from panels import services, webhooks
from panels.models import ParticipantState, WebhookEvent
from tests.builders import PROLIFIC_PID, make_panel_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

AT_ONCE = 6
SESSION = "60f6d313d530edde21564465"


def run_at_once(calls) -> tuple[list, list]:
    start, results, errors = threading.Barrier(len(calls)), [], []

    def run(call):
        try:
            start.wait()
            results.append(call())
        except Exception as error:  # collected and reported by the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results, errors


def returned_event(event_id: str) -> webhooks.StatusEvent:
    return webhooks.StatusEvent(
        event_id=event_id,
        event_type=webhooks.SUBMISSION_STATUS_CHANGE,
        resource_id=SESSION,
        status="RETURNED",
        participant_id=PROLIFIC_PID,
    )


def test_one_event_delivered_several_times_at_once_is_kept_and_acted_on_once(postgres, study):
    panel = make_panel_study(study)
    participant = services.participant_join(panel_study=panel, pid=PROLIFIC_PID, session_id=SESSION)

    results, errors = run_at_once(
        [lambda: services.prolific_event_receive(event=returned_event("evt-1"))] * AT_ONCE
    )

    assert errors == []
    assert sorted(new for _outcome, new in results) == [False] * (AT_ONCE - 1) + [True]
    assert {outcome for outcome, _new in results} == {"returned"}
    assert WebhookEvent.objects.count() == 1
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1
    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED


def test_leaving_and_prolifics_return_at_once_end_the_batch_once(postgres, study):
    panel = make_panel_study(study)
    participant = services.participant_join(panel_study=panel, pid=PROLIFIC_PID, session_id=SESSION)

    def leave():
        return services.participant_return(participant=participant, source="participant")

    _results, errors = run_at_once(
        [leave, lambda: services.prolific_event_receive(event=returned_event("evt-2"))]
    )

    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1
    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED
    # Either the participant left first (Prolific's event is then recorded as ignored) or
    # the event came first (the participant's leave is then refused as finished).
    outcome = WebhookEvent.objects.get().outcome
    assert outcome in ("returned", "ignored: already returned")
    if outcome == "returned":
        assert [error.code for error in errors] == ["finished"]
    else:
        assert errors == []
