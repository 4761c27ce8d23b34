"""Prolific's signed status webhook (`/panels/prolific/webhook/`): only a request signed
with the workspace's secret within five minutes is believed; a submission returned or
timed out on Prolific frees the participant's leases at once; every event is kept once by
its id; events that arrive late or about nobody we know change nothing and are recorded
with what they did."""

import json
import logging
import time

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import Assignment, AssignmentState, AuditAction, AuditEvent
from panels import services, webhooks
from panels.models import Decision, Participant, ParticipantState, WebhookEvent
from tests.builders import PROLIFIC_PID, make_panel_study, make_study
from tests.fixtures.prolific import SECRET, WebhookSender, submission_event

pytestmark = pytest.mark.django_db

SESSION = "60f6d313d530edde21564465"


@pytest.fixture
def panel(study):
    return make_panel_study(study, items_per_participant=3)


@pytest.fixture
def participant(panel, luffy):
    """On Prolific, rating, with a live lease."""
    joined = services.participant_join(
        panel_study=panel, pid=PROLIFIC_PID, session_id=SESSION, prolific_study_id="study-1"
    )
    services.participant_consent(participant=joined)
    services.participant_admit(participant=joined, characters=[luffy])
    annotation_services.assignment_next(user=joined.user)
    return joined


def live_leases(participant) -> int:
    return Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).count()


def state_of(participant) -> str:
    participant.refresh_from_db()
    return participant.state


def nothing_changed(participant) -> bool:
    return (
        state_of(participant) == ParticipantState.STARTED
        and live_leases(participant) == 1
        and not WebhookEvent.objects.exists()
        and not AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).exists()
    )


# Believed -----------------------------------------------------------------------------------


def test_a_signed_return_frees_the_participants_leases_at_once(
    client, participant, prolific_webhook
):
    response = prolific_webhook.send(
        client, submission_event(SESSION, "RETURNED", pid=PROLIFIC_PID), event_id="evt-1"
    )
    assert response.status_code == 200
    assert response.json() == {"outcome": "returned", "duplicate": False}
    assert state_of(participant) == ParticipantState.RETURNED
    assert live_leases(participant) == 0
    event = WebhookEvent.objects.get()
    assert (event.provider, event.event_id, event.event_type) == (
        "prolific",
        "evt-1",
        "submission.status.change",
    )
    assert (event.resource_id, event.status, event.outcome) == (SESSION, "RETURNED", "returned")
    audit = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert audit.actor is None and audit.note.startswith("panel")


def test_a_signed_time_out_ends_the_batch_now_even_before_our_deadline(
    client, participant, prolific_webhook
):
    response = prolific_webhook.send(client, submission_event(SESSION, "TIMED-OUT"))
    assert response.json()["outcome"] == "timed out"
    assert state_of(participant) == ParticipantState.TIMED_OUT
    assert live_leases(participant) == 0 and participant.code == ""


@pytest.mark.parametrize("status", ["APPROVED", "REJECTED", "AWAITING REVIEW", "ACTIVE"])
def test_other_statuses_are_recorded_and_change_nothing(
    client, participant, prolific_webhook, status
):
    response = prolific_webhook.send(client, submission_event(SESSION, status))
    assert response.status_code == 200 and response.json()["outcome"] == "recorded"
    assert WebhookEvent.objects.get().status == status
    assert state_of(participant) == ParticipantState.STARTED and live_leases(participant) == 1


def test_other_event_types_are_recorded(client, participant, prolific_webhook):
    body = {"resource_id": "study-1", "event_type": "study.status.change", "status": "PAUSED"}
    response = prolific_webhook.send(client, body)
    assert response.json()["outcome"] == "recorded"
    assert WebhookEvent.objects.get().event_type == "study.status.change"
    assert state_of(participant) == ParticipantState.STARTED


def test_the_signature_of_prolifics_own_example_is_accepted(client, participant, prolific_webhook):
    """Prolific's example signs json.dumps of the parsed body: a body sent with other
    spacing still verifies."""
    payload = submission_event(SESSION, "RETURNED")
    compact = json.dumps(payload, separators=(",", ":")).encode()
    headers = prolific_webhook.headers(json.dumps(payload).encode())
    response = prolific_webhook.send(client, compact, headers=headers)
    assert response.status_code == 200
    assert state_of(participant) == ParticipantState.RETURNED


# Kept once, in any order -------------------------------------------------------------------


def test_a_redelivered_event_changes_nothing_a_second_time(client, participant, prolific_webhook):
    first = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"), event_id="evt-9")
    again = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"), event_id="evt-9")
    other = prolific_webhook.send(client, submission_event(SESSION, "ACTIVE"), event_id="evt-9")
    assert first.json() == {"outcome": "returned", "duplicate": False}
    assert again.json() == {"outcome": "returned", "duplicate": True}
    assert other.status_code == 200 and other.json()["duplicate"] is True
    assert WebhookEvent.objects.count() == 1
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1


def test_a_return_after_we_completed_them_changes_nothing(client, participant, prolific_webhook):
    Participant.objects.filter(pk=participant.pk).update(
        state=ParticipantState.COMPLETED, code="C1A2B3"
    )
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"))
    assert response.json()["outcome"] == "ignored: already completed"
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert WebhookEvent.objects.get().outcome == "ignored: already completed"


def test_prolifics_return_after_the_participant_left_here_changes_nothing(
    client, participant, prolific_webhook
):
    services.participant_return(participant=participant, source="participant")
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"))
    assert response.json()["outcome"] == "ignored: already returned"
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1


def test_an_event_for_an_unknown_submission_is_recorded_and_changes_nothing(
    client, participant, prolific_webhook
):
    response = prolific_webhook.send(client, submission_event("not-ours", "RETURNED"))
    assert response.status_code == 200
    assert response.json()["outcome"] == "unknown submission"
    assert WebhookEvent.objects.get().outcome == "unknown submission"
    assert state_of(participant) == ParticipantState.STARTED and live_leases(participant) == 1


def test_an_event_naming_another_participant_changes_nothing(client, participant, prolific_webhook):
    response = prolific_webhook.send(
        client, submission_event(SESSION, "RETURNED", pid="someone-else")
    )
    assert response.json()["outcome"].startswith("participant id mismatch")
    assert state_of(participant) == ParticipantState.STARTED and live_leases(participant) == 1


def test_a_status_older_than_what_we_hold_changes_nothing(client, participant, prolific_webhook):
    prolific_webhook.send(client, submission_event(SESSION, "RETURNED"), event_id="late-2")
    # The ACTIVE sent before the return arrives after it.
    stale = prolific_webhook.send(client, submission_event(SESSION, "ACTIVE"), event_id="early-1")
    assert stale.json()["outcome"] == "stale: we hold ended"
    assert state_of(participant) == ParticipantState.RETURNED
    assert WebhookEvent.objects.get(event_id="early-1").outcome == "stale: we hold ended"


def test_a_return_older_than_a_decision_we_hold_changes_nothing(
    client, participant, prolific_webhook
):
    Participant.objects.filter(pk=participant.pk).update(decision=Decision.APPROVED)
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"))
    assert response.json()["outcome"] == "stale: we hold decided"
    assert state_of(participant) == ParticipantState.STARTED and live_leases(participant) == 1


def test_a_return_after_prolific_approved_the_submission_is_stale(
    client, participant, prolific_webhook
):
    prolific_webhook.send(client, submission_event(SESSION, "APPROVED"))
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"))
    assert response.json()["outcome"] == "stale: we hold decided"
    assert state_of(participant) == ParticipantState.STARTED


# Not believed, or not understood: 4xx and nothing changed ---------------------------------


def post(client, body: bytes, headers: dict):
    return client.post(
        reverse("panel-prolific-webhook"),
        data=body,
        content_type="application/json",
        headers=headers,
    )


def test_a_wrong_signature_is_refused(client, participant, prolific_webhook):
    body = WebhookSender.raw(submission_event(SESSION, "RETURNED"))
    headers = prolific_webhook.headers(body, signature="bm90IHRoZSBzaWduYXR1cmU=")
    response = post(client, body, headers)
    assert response.status_code == 403 and response.json() == {"error": "bad signature"}
    assert nothing_changed(participant)


def test_a_signature_made_with_another_secret_is_refused(client, participant, prolific_webhook):
    response = WebhookSender("another-secret").send(client, submission_event(SESSION, "RETURNED"))
    assert response.status_code == 403
    assert nothing_changed(participant)


def test_a_body_changed_after_signing_is_refused(client, participant, prolific_webhook):
    signed = WebhookSender.raw(submission_event("not-ours", "RETURNED"))
    sent = WebhookSender.raw(submission_event(SESSION, "RETURNED"))
    response = post(client, sent, prolific_webhook.headers(signed))
    assert response.status_code == 403
    assert nothing_changed(participant)


@pytest.mark.parametrize("missing", [webhooks.SIGNATURE_HEADER, webhooks.TIMESTAMP_HEADER, "both"])
def test_a_missing_signature_is_refused(client, participant, prolific_webhook, missing):
    body = WebhookSender.raw(submission_event(SESSION, "RETURNED"))
    headers = prolific_webhook.headers(body)
    for name in (
        [webhooks.SIGNATURE_HEADER, webhooks.TIMESTAMP_HEADER] if missing == "both" else [missing]
    ):
        del headers[name]
    response = post(client, body, headers)
    assert response.status_code == 403 and response.json() == {"error": "missing signature"}
    assert nothing_changed(participant)


@pytest.mark.parametrize("offset", [-310, +310, -3600])
def test_a_signature_older_or_newer_than_five_minutes_is_refused(
    client, participant, prolific_webhook, offset
):
    stamp = int(time.time()) + offset
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"), timestamp=stamp)
    assert response.status_code == 403 and response.json() == {"error": "stale timestamp"}
    assert nothing_changed(participant)


def test_a_signature_four_minutes_old_is_believed(client, participant, prolific_webhook):
    stamp = int(time.time()) - 240
    response = prolific_webhook.send(client, submission_event(SESSION, "RETURNED"), timestamp=stamp)
    assert response.status_code == 200


def test_a_timestamp_that_is_not_a_time_is_refused(client, participant, prolific_webhook):
    response = prolific_webhook.send(
        client, submission_event(SESSION, "RETURNED"), timestamp="yesterday"
    )
    assert response.status_code == 403
    assert nothing_changed(participant)


def test_an_oversized_body_is_refused_even_when_signed(client, participant, prolific_webhook):
    payload = {**submission_event(SESSION, "RETURNED"), "padding": "x" * webhooks.MAX_BODY_BYTES}
    response = prolific_webhook.send(client, payload)
    assert response.status_code == 413
    assert nothing_changed(participant)


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2, 3]",
        b'"RETURNED"',
        json.dumps({"event_type": "submission.status.change", "status": "RETURNED"}).encode(),
        json.dumps({"resource_id": SESSION, "status": "RETURNED"}).encode(),
        json.dumps(submission_event(SESSION, "")).encode(),
        json.dumps(submission_event(SESSION, "R" * 40)).encode(),
        json.dumps(submission_event("x" * 65, "RETURNED")).encode(),
        json.dumps({**submission_event(SESSION, "RETURNED"), "participant_id": 42}).encode(),
        "\xff".encode("latin-1"),
    ],
)
def test_a_signed_body_that_is_not_an_event_is_refused(client, participant, prolific_webhook, body):
    response = prolific_webhook.send(client, body)
    assert response.status_code == 400
    assert nothing_changed(participant)


@pytest.mark.parametrize("event_id", ["", "e" * 129, "evt\n1"])
def test_an_event_without_a_usable_event_id_is_refused(
    client, participant, prolific_webhook, event_id
):
    body = WebhookSender.raw(submission_event(SESSION, "RETURNED"))
    headers = prolific_webhook.headers(body)
    headers[webhooks.EVENT_ID_HEADER] = event_id
    if not event_id:
        del headers[webhooks.EVENT_ID_HEADER]
    response = post(client, body, headers)
    assert response.status_code == 400
    assert nothing_changed(participant)


def test_without_a_secret_configured_every_event_waits(client, participant, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    response = WebhookSender(SECRET).send(client, submission_event(SESSION, "RETURNED"))
    assert response.status_code == 503
    assert nothing_changed(participant)


def test_only_post_is_answered(client, participant, prolific_webhook):
    assert client.get(reverse("panel-prolific-webhook")).status_code == 405
    assert nothing_changed(participant)


def test_the_secret_and_signatures_are_never_logged(client, participant, prolific_webhook, caplog):
    caplog.set_level(logging.DEBUG)
    body = WebhookSender.raw(submission_event(SESSION, "RETURNED"))
    good = prolific_webhook.headers(body)
    post(client, body, {**good, webhooks.SIGNATURE_HEADER: "d3Jvbmc="})
    post(client, body, good)
    assert caplog.records
    assert SECRET not in caplog.text and good[webhooks.SIGNATURE_HEADER] not in caplog.text


def test_the_webhook_address_is_the_documented_one():
    assert reverse("panel-prolific-webhook") == "/panels/prolific/webhook/"


@pytest.mark.django_db(transaction=True)
def test_a_signed_return_sent_to_the_running_server_frees_the_leases(
    live_server, demo_dataset, luffy, settings
):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    panel = make_panel_study(make_study(characters=[luffy]), items_per_participant=3)
    joined = services.participant_join(panel_study=panel, pid=PROLIFIC_PID, session_id=SESSION)
    services.participant_consent(participant=joined)
    services.participant_admit(participant=joined, characters=[luffy])
    annotation_services.assignment_next(user=joined.user)

    sender = WebhookSender(SECRET)
    answer = sender.send(live_server.url, submission_event(SESSION, "RETURNED"), event_id="live")
    replay = sender.send(live_server.url, submission_event(SESSION, "RETURNED"), event_id="live")
    forged = WebhookSender("guess").send(live_server.url, submission_event(SESSION, "TIMED-OUT"))

    assert answer.status_code == 200 and answer.json()["outcome"] == "returned"
    assert replay.json()["duplicate"] is True and forged.status_code == 403
    assert state_of(joined) == ParticipantState.RETURNED and live_leases(joined) == 0
