"""What staff do from a panel study's dashboard: approve the chosen submissions, reject one
or ask for its return, pay a bonus (those who pay only), pause and resume arrivals, change
the places, and set an unclear attention check aside. On Prolific each goes through its API
(a local server plays Prolific); a refusal is shown on the dashboard and changes nothing."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from annotation.models import AuditAction, AuditEvent
from panels import services
from panels.models import Decision, PanelStudy, Participant, ParticipantState
from tests.builders import make_panel_study, study_manager_named

pytestmark = pytest.mark.django_db

REASON = (
    "Your answers were the same on every scale of every item, and both attention questions "
    "were answered against what they asked, so we cannot use this batch of ratings."
)


@pytest.fixture
def panel(study):
    return make_panel_study(study, prolific_study_id="study-1", places=20)


@pytest.fixture
def manager(db):
    return study_manager_named("manager@example.com")


@pytest.fixture
def payer(db):
    user = study_manager_named("payer@example.com")
    user.user_permissions.add(Permission.objects.get(codename="pay_participants"))
    return user


def finished(panel, pid, state=ParticipantState.COMPLETED) -> Participant:
    participant = services.participant_join(
        panel_study=panel, pid=pid, session_id=f"sub-{pid}", prolific_study_id="study-1"
    )
    code = panel.completion_code if state == ParticipantState.COMPLETED else ""
    Participant.objects.filter(pk=participant.pk).update(state=state, code=code)
    participant.refresh_from_db()
    return participant


def url(name, panel):
    return reverse(name, args=[panel.study.slug])


def messages_of(response) -> str:
    return " ".join(str(message) for message in response.context["messages"])


def test_a_payer_approves_the_chosen_submissions_through_prolific(
    client, panel, payer, prolific_server
):
    first, second, third = (finished(panel, pid) for pid in ("p1", "p2", "p3"))
    client.force_login(payer)

    page = client.get(url("staff-panel", panel)).content.decode()
    response = client.post(
        url("staff-panel-approve", panel), {"participants": [first.pk, second.pk]}, follow=True
    )

    assert f'value="{first.pk}" form="approve-form"' in page
    assert "2 submissions approved." in messages_of(response)
    assert prolific_server.calls[0].body == {"submission_ids": ["sub-p1", "sub-p2"]}
    assert [Participant.objects.get(pk=p.pk).decision for p in (first, second, third)] == [
        Decision.APPROVED,
        Decision.APPROVED,
        "",
    ]


def test_a_manager_who_does_not_pay_cannot_decide_on_submissions(
    client, panel, manager, prolific_server
):
    participant = finished(panel, "p1")
    client.force_login(manager)

    page = client.get(url("staff-panel", panel)).content.decode()
    approve = client.post(url("staff-panel-approve", panel), {"participants": [participant.pk]})
    decide = client.post(
        url("staff-panel-decide", panel),
        {"participant": participant.pk, "verdict": "bonus", "bonus": "1.00"},
    )

    assert 'id="approve-form"' not in page and 'id="decide"' not in page
    assert approve.status_code == 403 and decide.status_code == 403
    assert prolific_server.calls == []
    assert Participant.objects.get(pk=participant.pk).decision == ""


def test_a_participant_of_another_study_cannot_be_approved_here(
    client, panel, payer, prolific_server, demo_dataset
):
    from tests.builders import make_study

    other = finished(make_panel_study(make_study(), prolific_study_id="study-2"), "o1")
    client.force_login(payer)

    response = client.post(
        url("staff-panel-approve", panel), {"participants": [other.pk]}, follow=True
    )

    assert "Choose participants of this study only." in messages_of(response)
    assert prolific_server.calls == [] and Participant.objects.get(pk=other.pk).decision == ""


def test_a_rejection_needs_prolifics_reason_and_is_then_sent_with_its_category(
    client, panel, payer, prolific_server
):
    participant = finished(panel, "p1")
    client.force_login(payer)
    form = {"participant": participant.pk, "verdict": "reject", "category": "FAILED_CHECK"}

    short = client.post(url("staff-panel-decide", panel), {**form, "reason": "bad"}, follow=True)
    assert Participant.objects.get(pk=participant.pk).decision == ""
    assert prolific_server.calls == [] and "100" in messages_of(short)

    done = client.post(url("staff-panel-decide", panel), {**form, "reason": REASON}, follow=True)

    assert "Decision recorded." in messages_of(done)
    assert prolific_server.paths() == ["POST /api/v1/submissions/sub-p1/transition/"]
    assert prolific_server.calls[0].body["rejection_category"] == "FAILED_CHECK"
    rejected = Participant.objects.get(pk=participant.pk)
    assert (rejected.decision, rejected.decision_note) == (Decision.REJECTED, REASON)


def test_asking_for_a_return_sends_the_reason(client, panel, payer, prolific_server):
    participant = finished(panel, "p1")
    client.force_login(payer)

    client.post(
        url("staff-panel-decide", panel),
        {"participant": participant.pk, "verdict": "return", "reason": "The page broke."},
    )

    assert prolific_server.paths() == ["POST /api/v1/submissions/sub-p1/request-return/"]
    assert Participant.objects.get(pk=participant.pk).decision == Decision.RETURN_ASKED


def test_a_bonus_is_typed_as_money_and_paid_in_minor_units(client, panel, payer, prolific_server):
    participant = finished(panel, "p1")
    client.force_login(payer)
    form = {"participant": participant.pk, "verdict": "bonus"}

    for wrong in ("", "0", "-1", "abc", "1.234"):
        response = client.post(
            url("staff-panel-decide", panel), {**form, "bonus": wrong}, follow=True
        )
        assert "Bonus: an amount such as 0.50." in messages_of(response), wrong
    assert prolific_server.calls == []

    client.post(url("staff-panel-decide", panel), {**form, "bonus": "0.75"})

    assert Participant.objects.get(pk=participant.pk).bonus_minor_units == 75
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_BONUS).count() == 1


def test_when_prolific_fails_the_dashboard_says_so_and_nothing_changes(
    client, panel, payer, prolific_server
):
    participant = finished(panel, "p1")
    prolific_server.script("unauthorized")
    client.force_login(payer)

    response = client.post(
        url("staff-panel-approve", panel), {"participants": [participant.pk]}, follow=True
    )

    assert "Prolific refused the API token" in messages_of(response)
    assert Participant.objects.get(pk=participant.pk).decision == ""


def test_a_manager_pauses_and_resumes_arrivals_on_prolific_and_here(
    client, panel, manager, prolific_server
):
    client.force_login(manager)

    client.post(url("staff-panel-openness", panel), {"action": "pause"})
    assert PanelStudy.objects.get(pk=panel.pk).is_open is False
    client.post(url("staff-panel-openness", panel), {"action": "resume"})

    assert PanelStudy.objects.get(pk=panel.pk).is_open is True
    assert [call.body for call in prolific_server.calls] == [
        {"action": "PAUSE"},
        {"action": "START"},
    ]
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_STUDY_ACTION).count() == 2


@pytest.mark.parametrize("places", ["", "-1", "many"])
def test_bad_places_are_refused_and_change_nothing(client, panel, manager, prolific_server, places):
    client.force_login(manager)

    response = client.post(url("staff-panel-places", panel), {"places": places}, follow=True)

    assert "Places: a whole number of 0 or more." in messages_of(response)
    assert PanelStudy.objects.get(pk=panel.pk).places == 20 and prolific_server.calls == []


def test_places_are_changed_on_prolific_and_here(client, panel, manager, prolific_server):
    client.force_login(manager)

    client.post(url("staff-panel-places", panel), {"places": "35"})

    assert PanelStudy.objects.get(pk=panel.pk).places == 35
    assert prolific_server.calls[0].body == {"total_available_places": 35}


def test_an_unclear_check_is_set_aside_from_the_dashboard(client, study, manager):
    panel = make_panel_study(study, check_positions=[2, 5], failed_checks_code="FAILCHK")
    client.force_login(manager)
    page = client.get(url("staff-panel", panel)).content.decode()
    key = page.split('name="check"', 1)[1].split('value="', 2)[1].split('"', 1)[0]

    refused = client.post(url("staff-panel-check-void", panel), {"check": key}, follow=True)
    assert PanelStudy.objects.get(pk=panel.pk).voided_checks == []
    assert "Please say why the check is unclear." in messages_of(refused)

    client.post(url("staff-panel-check-void", panel), {"check": key, "reason": "Two readings."})

    assert PanelStudy.objects.get(pk=panel.pk).voided_checks == [key]
    assert "set aside as unclear" in client.get(url("staff-panel", panel)).content.decode()


def test_the_forms_offer_only_what_can_be_decided(client, panel, payer):
    done = finished(panel, "p1")
    returned = finished(panel, "p2", ParticipantState.RETURNED)
    rating = services.participant_join(panel_study=panel, pid="p3")
    client.force_login(payer)

    page = client.get(url("staff-panel", panel)).content.decode()
    decide = page[page.index('id="decide"') :]

    assert f'value="{done.pk}" form="approve-form"' in page
    assert f'value="{returned.pk}" form="approve-form"' not in page
    assert f'value="{rating.pk}" form="approve-form"' not in page
    assert f'<option value="{done.pk}"' in decide and f'<option value="{rating.pk}"' not in decide
    # Nothing is chosen for the staff member: the first choice is "Choose…".
    assert '<option value="" selected>Choose…</option>' in decide
    assert "Failed attention checks" in decide and "FAILED_CHECK</option>" not in decide


def test_a_refused_payment_file_says_why_on_a_page_that_fits_a_phone(client, panel, manager):
    client.force_login(manager)

    response = client.get(url("staff-panel-payments", panel))

    assert response.status_code == 403
    assert b"Only those who pay participants may download payments." in response.content
    assert b'name="viewport"' in response.content
