"""What staff decide about a panel study's participants, and what they do to the study on
the panel. On Prolific each decision is Prolific's API call first (a local server plays
Prolific here), and our records change only once it answered yes; on another panel the
decision is recorded for the payment file. Bad input, and Prolific saying no, change
nothing."""

import pytest

from annotation.models import AuditAction, AuditEvent
from panels import services
from panels.models import Decision, PanelStudy, Participant, ParticipantState
from tests.builders import UserFactory, make_panel_study, make_study

pytestmark = pytest.mark.django_db

REASON = (
    "Your answers were the same on every scale of every item, and the attention check was "
    "answered at random, so we cannot use this batch."
)
GENERIC = {
    "provider": "generic",
    "id_parameter": "uid",
    "completion_url_template": "https://panel.example.com/back?code={code}",
}


@pytest.fixture
def staff(db):
    return UserFactory(email="decider@example.com", is_staff=True)


@pytest.fixture
def panel(study):
    return make_panel_study(study)


@pytest.fixture
def generic(demo_dataset):
    return make_panel_study(make_study(), **GENERIC)


def finished(panel, pid, *, state=ParticipantState.COMPLETED, session=None) -> Participant:
    """A participant of `panel` whose batch ended in `state`, with Prolific's ids."""
    participant = services.participant_join(
        panel_study=panel,
        pid=pid,
        session_id=session if session is not None else f"sub-{pid}",
        prolific_study_id="study-1" if panel.provider == "prolific" else "",
    )
    code = {
        ParticipantState.COMPLETED: panel.completion_code,
        ParticipantState.SCREENED_OUT: panel.screen_out_code,
    }.get(state, "")
    Participant.objects.filter(pk=participant.pk).update(state=state, code=code)
    participant.refresh_from_db()
    return participant


def decisions(*participants) -> list[str]:
    return [Participant.objects.get(pk=p.pk).decision for p in participants]


def audited(action) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("pk"))


# Approve ------------------------------------------------------------------------------------


def test_approving_on_prolific_approves_the_submissions_there_then_here(
    panel, staff, prolific_server
):
    first = finished(panel, "p1")
    second = finished(panel, "p2", state=ParticipantState.SCREENED_OUT)

    services.submissions_approve(panel_study=panel, participants=[first, second], actor=staff)

    assert prolific_server.paths() == ["POST /api/v1/submissions/bulk-approve/"]
    assert prolific_server.calls[0].body == {"submission_ids": ["sub-p1", "sub-p2"]}
    assert decisions(first, second) == [Decision.APPROVED, Decision.APPROVED]
    events = audited(AuditAction.PANEL_DECISION)
    assert [event.actor for event in events] == [staff, staff]
    assert events[0].after == {"decision": "approved", "decision_note": ""}
    assert Participant.objects.get(pk=first.pk).decided_at is not None


def test_approving_on_another_panel_only_records_it(generic, staff, prolific_server):
    participant = finished(generic, "g1")
    services.submissions_approve(panel_study=generic, participants=[participant], actor=staff)
    assert decisions(participant) == [Decision.APPROVED]
    assert prolific_server.calls == []


def test_when_prolific_says_no_nothing_is_recorded(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    prolific_server.script(*["server_error"] * 4)
    with pytest.raises(services.PanelError) as failed:
        services.submissions_approve(panel_study=panel, participants=[participant], actor=staff)
    assert failed.value.code == "prolific" and "try again later" in failed.value.message
    assert decisions(participant) == [""]
    assert audited(AuditAction.PANEL_DECISION) == []


def test_a_refused_token_is_said_plainly_and_nothing_is_recorded(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    prolific_server.script("unauthorized")
    with pytest.raises(services.PanelError) as failed:
        services.submissions_approve(panel_study=panel, participants=[participant], actor=staff)
    assert "Prolific refused the API token" in failed.value.message
    assert decisions(participant) == [""]


@pytest.mark.parametrize(
    "state, code",
    [
        (ParticipantState.STARTED, "not_finished"),
        (ParticipantState.RETURNED, "returned"),
    ],
)
def test_a_decision_on_someone_not_finished_is_refused(panel, staff, prolific_server, state, code):
    ready, other = finished(panel, "p1"), finished(panel, "p2", state=state)
    with pytest.raises(services.PanelError) as refused:
        services.submissions_approve(panel_study=panel, participants=[ready, other], actor=staff)
    assert refused.value.code == code
    assert decisions(ready, other) == ["", ""] and prolific_server.calls == []


def test_a_participant_of_another_study_is_refused(panel, generic, staff, prolific_server):
    ours, theirs = finished(panel, "p1"), finished(generic, "g1")
    with pytest.raises(services.PanelError) as refused:
        services.submissions_approve(panel_study=panel, participants=[ours, theirs], actor=staff)
    assert refused.value.code == "other_study"
    assert decisions(ours, theirs) == ["", ""] and prolific_server.calls == []


def test_a_submission_is_decided_once(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    services.submissions_approve(panel_study=panel, participants=[participant], actor=staff)
    with pytest.raises(services.PanelError) as refused:
        services.submission_reject(participant=participant, reason=REASON, actor=staff)
    assert refused.value.code == "already_decided"
    assert decisions(participant) == [Decision.APPROVED]
    assert len(prolific_server.calls) == 1


def test_nobody_or_somebody_twice_is_refused(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    for chosen in ([], [participant, participant]):
        with pytest.raises(services.PanelError):
            services.submissions_approve(panel_study=panel, participants=chosen, actor=staff)
    assert prolific_server.calls == []


def test_a_participant_who_came_without_a_session_id_is_decided_on_prolific(
    panel, staff, prolific_server
):
    participant = finished(panel, "p1", session="")
    with pytest.raises(services.PanelError) as refused:
        services.submissions_approve(panel_study=panel, participants=[participant], actor=staff)
    assert refused.value.code == "no_submission" and prolific_server.calls == []


# Reject -------------------------------------------------------------------------------------


def test_rejecting_on_prolific_sends_the_reason_and_category(panel, staff, prolific_server):
    participant = finished(panel, "p1", state=ParticipantState.FAILED_CHECKS)
    services.submission_reject(
        participant=participant, reason=REASON, actor=staff, category="FAILED_CHECK"
    )
    assert prolific_server.paths() == ["POST /api/v1/submissions/sub-p1/transition/"]
    assert prolific_server.calls[0].body == {
        "action": "REJECT",
        "message": REASON,
        "rejection_category": "FAILED_CHECK",
    }
    participant.refresh_from_db()
    assert (participant.decision, participant.decision_note) == (Decision.REJECTED, REASON)
    event = audited(AuditAction.PANEL_DECISION)[0]
    assert event.actor == staff and event.after["decision_note"] == REASON


@pytest.mark.parametrize("reason", ["", "   ", None, "Too short for Prolific."])
def test_a_rejection_without_a_usable_reason_is_refused(panel, staff, prolific_server, reason):
    participant = finished(panel, "p1")
    with pytest.raises(services.PanelError) as refused:
        services.submission_reject(participant=participant, reason=reason, actor=staff)
    assert refused.value.code == "reason"
    assert decisions(participant) == [""] and prolific_server.calls == []


def test_a_rejection_category_prolific_does_not_know_is_refused(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    with pytest.raises(services.PanelError) as refused:
        services.submission_reject(
            participant=participant, reason=REASON, actor=staff, category="RUDE"
        )
    assert refused.value.code == "category" and prolific_server.calls == []


def test_on_another_panel_a_short_reason_is_enough(generic, staff, prolific_server):
    participant = finished(generic, "g1")
    services.submission_reject(participant=participant, reason="Straight-lined.", actor=staff)
    assert decisions(participant) == [Decision.REJECTED] and prolific_server.calls == []


def test_prolifics_refusal_of_a_rejection_changes_nothing(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    prolific_server.script(("bad_request", "This submission cannot be rejected."))
    with pytest.raises(services.PanelError) as failed:
        services.submission_reject(participant=participant, reason=REASON, actor=staff)
    assert "cannot be rejected" in failed.value.message
    assert decisions(participant) == [""]


# Ask to return ------------------------------------------------------------------------------


def test_asking_a_participant_to_return(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    services.submission_return_ask(
        participant=participant, reason="The page broke for you; please return.", actor=staff
    )
    assert prolific_server.paths() == ["POST /api/v1/submissions/sub-p1/request-return/"]
    assert prolific_server.calls[0].body == {
        "request_return_reasons": ["The page broke for you; please return."]
    }
    participant.refresh_from_db()
    assert participant.decision == Decision.RETURN_ASKED
    assert participant.decision_note == "The page broke for you; please return."


def test_asking_to_return_needs_a_reason_and_a_finished_batch(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    with pytest.raises(services.PanelError) as refused:
        services.submission_return_ask(participant=participant, reason=" ", actor=staff)
    assert refused.value.code == "reason"
    busy = finished(panel, "p2", state=ParticipantState.STARTED)
    with pytest.raises(services.PanelError) as refused:
        services.submission_return_ask(participant=busy, reason="Please return.", actor=staff)
    assert refused.value.code == "not_finished"
    assert decisions(participant, busy) == ["", ""] and prolific_server.calls == []


# Bonuses ------------------------------------------------------------------------------------


def test_bonuses_are_created_then_paid_on_prolific_and_added_here(panel, staff, prolific_server):
    first, second = finished(panel, "p1"), finished(panel, "p2", state="timed_out")
    services.bonuses_pay(panel_study=panel, bonuses={first: 150, second: 25}, actor=staff)
    services.bonuses_pay(panel_study=panel, bonuses={first: 50}, actor=staff)

    assert prolific_server.paths() == [
        "POST /api/v1/submissions/bonus-payments/",
        "POST /api/v1/bulk-bonus-payments/bonus-1/pay/",
        "POST /api/v1/submissions/bonus-payments/",
        "POST /api/v1/bulk-bonus-payments/bonus-2/pay/",
    ]
    assert prolific_server.calls[0].body == {
        "study_id": "study-1",
        "csv_bonuses": "p1,1.50\np2,0.25",
    }
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.bonus_minor_units, second.bonus_minor_units) == (200, 25)
    events = audited(AuditAction.PANEL_BONUS)
    assert len(events) == 3 and all(event.actor == staff for event in events)
    assert events[2].before == {"bonus_minor_units": 150}
    assert events[2].after == {"bonus_minor_units": 200}


def test_the_panel_studys_own_prolific_id_is_used_when_set(panel, staff, prolific_server):
    PanelStudy.objects.filter(pk=panel.pk).update(prolific_study_id="study-own")
    panel.refresh_from_db()
    services.bonuses_pay(panel_study=panel, bonuses={finished(panel, "p1"): 10}, actor=staff)
    assert prolific_server.calls[0].body["study_id"] == "study-own"


@pytest.mark.parametrize("amount", [-5, 0, 1.5, "100", True, 10_000_000])
def test_a_bonus_that_is_not_a_positive_whole_amount_is_refused(
    panel, staff, prolific_server, amount
):
    participant = finished(panel, "p1")
    with pytest.raises(services.PanelError) as refused:
        services.bonuses_pay(panel_study=panel, bonuses={participant: amount}, actor=staff)
    assert refused.value.code == "bonus"
    participant.refresh_from_db()
    assert participant.bonus_minor_units == 0 and prolific_server.calls == []


def test_bonuses_for_someone_still_at_work_or_of_another_study_are_refused(
    panel, generic, staff, prolific_server
):
    done, busy = finished(panel, "p1"), finished(panel, "p2", state=ParticipantState.STARTED)
    stranger = finished(generic, "g1")
    for bonuses, code in (
        ({done: 10, busy: 10}, "not_finished"),
        ({done: 10, stranger: 10}, "other_study"),
    ):
        with pytest.raises(services.PanelError) as refused:
            services.bonuses_pay(panel_study=panel, bonuses=bonuses, actor=staff)
        assert refused.value.code == code
    assert prolific_server.calls == []
    assert [p.bonus_minor_units for p in Participant.objects.order_by("pk")] == [0, 0, 0]


def test_bonuses_created_but_not_paid_record_nothing_and_say_so(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    prolific_server.script("ok", "server_error", "server_error", "server_error", "server_error")
    with pytest.raises(services.PanelError) as failed:
        services.bonuses_pay(panel_study=panel, bonuses={participant: 100}, actor=staff)
    assert "did not pay them" in failed.value.message
    participant.refresh_from_db()
    assert participant.bonus_minor_units == 0
    assert audited(AuditAction.PANEL_BONUS) == []


def test_bonuses_on_another_panel_are_recorded_for_the_payment_file(
    generic, staff, prolific_server
):
    participant = finished(generic, "g1")
    services.bonuses_pay(panel_study=generic, bonuses={participant: 75}, actor=staff)
    participant.refresh_from_db()
    assert participant.bonus_minor_units == 75 and prolific_server.calls == []


def test_without_a_prolific_study_id_bonuses_are_refused(panel, staff, prolific_server):
    participant = finished(panel, "p1")
    Participant.objects.filter(pk=participant.pk).update(prolific_study_id="")
    participant.refresh_from_db()
    with pytest.raises(services.PanelError) as refused:
        services.bonuses_pay(panel_study=panel, bonuses={participant: 10}, actor=staff)
    assert refused.value.code == "no_prolific_study" and prolific_server.calls == []


# The study on the panel ---------------------------------------------------------------------


def test_pausing_and_resuming_on_prolific(panel, staff, prolific_server):
    finished(panel, "p1")
    services.panel_pause(panel_study=panel, actor=staff)
    panel.refresh_from_db()
    assert panel.is_open is False
    services.panel_resume(panel_study=panel, actor=staff)
    panel.refresh_from_db()
    assert panel.is_open is True
    assert [call.body for call in prolific_server.calls] == [
        {"action": "PAUSE"},
        {"action": "START"},
    ]
    assert prolific_server.paths()[0] == "POST /api/v1/studies/study-1/transition/"
    events = audited(AuditAction.PANEL_STUDY_ACTION)
    assert [(event.before, event.after) for event in events] == [
        ({"is_open": True}, {"is_open": False}),
        ({"is_open": False}, {"is_open": True}),
    ]
    assert all(event.actor == staff for event in events)


def test_a_pause_prolific_refuses_leaves_the_study_open(panel, staff, prolific_server):
    finished(panel, "p1")
    prolific_server.script("forbidden")
    with pytest.raises(services.PanelError) as failed:
        services.panel_pause(panel_study=panel, actor=staff)
    assert "Prolific refused the API token" in failed.value.message
    panel.refresh_from_db()
    assert panel.is_open is True and audited(AuditAction.PANEL_STUDY_ACTION) == []


def test_without_a_token_staff_are_told_how_to_make_that_change_by_hand(
    panel, staff, settings, prolific_server
):
    """Not how to pause when they asked to open, add places or approve: each refusal names
    the way that needs no token."""
    participant = finished(panel, "p1")
    settings.PROLIFIC_API_TOKEN = ""
    settings.PROLIFIC_API_TOKEN_FILE = ""
    slug = panel.study.slug
    for action, by_hand in (
        (lambda: services.panel_resume(panel_study=panel, actor=staff), f"{slug} --open"),
        (
            lambda: services.panel_places_set(panel_study=panel, places=40, actor=staff),
            f"{slug} --places 40",
        ),
        (
            lambda: services.submissions_approve(
                panel_study=panel, participants=[participant], actor=staff
            ),
            "Prolific's own study page",
        ),
    ):
        with pytest.raises(services.PanelError) as refused:
            action()
        assert "No Prolific API token" in refused.value.message
        assert "Nothing was changed." in refused.value.message
        assert by_hand in refused.value.message
    panel.refresh_from_db()
    assert panel.places != 40 and audited(AuditAction.PANEL_STUDY_ACTION) == []
    assert prolific_server.calls == []


def test_a_prolific_study_whose_id_is_not_known_is_not_paused(panel, staff, prolific_server):
    with pytest.raises(services.PanelError) as refused:
        services.panel_pause(panel_study=panel, actor=staff)
    assert refused.value.code == "no_prolific_study"
    panel.refresh_from_db()
    assert panel.is_open is True and prolific_server.calls == []


def test_places_on_prolific(panel, staff, prolific_server):
    finished(panel, "p1")
    services.panel_places_set(panel_study=panel, places=40, actor=staff)
    assert prolific_server.paths() == ["PATCH /api/v1/studies/study-1/"]
    assert prolific_server.calls[0].body == {"total_available_places": 40}
    panel.refresh_from_db()
    assert panel.places == 40
    event = audited(AuditAction.PANEL_STUDY_ACTION)[0]
    assert (event.before, event.after) == ({"places": 0}, {"places": 40})


def test_places_prolific_refuses_change_nothing(panel, staff, prolific_server):
    finished(panel, "p1")
    prolific_server.script(("bad_request", "You cannot decrease the available places."))
    with pytest.raises(services.PanelError) as failed:
        services.panel_places_set(panel_study=panel, places=5, actor=staff)
    assert "cannot decrease" in failed.value.message
    panel.refresh_from_db()
    assert panel.places == 0


@pytest.mark.parametrize("places", [-1, 2.5, "10", None, True])
def test_a_number_of_places_that_is_not_whole_is_refused(panel, staff, prolific_server, places):
    with pytest.raises(services.PanelError) as refused:
        services.panel_places_set(panel_study=panel, places=places, actor=staff)
    assert refused.value.code == "places" and prolific_server.calls == []


def test_prolific_needs_at_least_one_place_another_panel_may_have_no_limit(
    panel, generic, staff, prolific_server
):
    finished(panel, "p1")
    with pytest.raises(services.PanelError):
        services.panel_places_set(panel_study=panel, places=0, actor=staff)
    services.panel_places_set(panel_study=generic, places=0, actor=staff)
    services.panel_pause(panel_study=generic, actor=staff)
    generic.refresh_from_db()
    assert (generic.places, generic.is_open) == (0, False)
    assert prolific_server.calls == []


def test_the_decisions_keep_the_names_the_staff_dashboard_calls():
    for name in (
        "submissions_approve",
        "submission_reject",
        "submission_return_ask",
        "bonuses_pay",
        "panel_pause",
        "panel_resume",
        "panel_places_set",
        "participant_return",
    ):
        assert name in services.__all__ and callable(getattr(services, name))
