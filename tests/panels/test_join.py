"""The panel's link `/join/<slug>/`: a new participant gets a pseudonymous account and is
signed in, the same id resumes the same person, and every refused link shows a clear page
and creates nothing."""

from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import AnnotatorProfile, Study, StudyStatus
from panels import services
from panels.models import Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, panel_participant

pytestmark = pytest.mark.django_db

PROLIFIC_STUDY = "60aabbccddeeff0011223344"
SESSION = "6543210fedcba98765432100"


@pytest.fixture
def panel(study):
    return make_panel_study(study)


def join_url(slug: str, **parameters) -> str:
    return reverse("panel-join", args=[slug]) + "?" + urlencode(parameters)


def prolific_link(panel, pid=PROLIFIC_PID) -> str:
    return join_url(panel.study.slug, PROLIFIC_PID=pid, STUDY_ID=PROLIFIC_STUDY, SESSION_ID=SESSION)


def counts() -> tuple[int, int, int]:
    return (
        get_user_model().objects.count(),
        Participant.objects.count(),
        AnnotatorProfile.objects.count(),
    )


def test_a_new_participant_is_signed_in_to_a_pseudonymous_account(client, panel):
    response = client.get(prolific_link(panel))

    assert response.status_code == 302
    assert response["Location"] == reverse("panel-start", args=[panel.study.slug])
    participant = Participant.objects.get()
    user = participant.user
    assert user.username.startswith("panel-") and user.email == ""
    assert not user.has_usable_password()
    assert (participant.session_id, participant.prolific_study_id) == (SESSION, PROLIFIC_STUDY)
    assert participant.pid_hash == services.pid_hash(PROLIFIC_PID) != PROLIFIC_PID
    assert participant.deadline - participant.started_at == panel_minutes(panel)
    assert participant.state == ParticipantState.STARTED and participant.code == ""
    assert AnnotatorProfile.objects.get(user=user).consented_at is None
    assert int(client.session["_auth_user_id"]) == user.pk


def panel_minutes(panel):
    from datetime import timedelta

    return timedelta(minutes=panel.minutes)


def test_the_start_page_asks_for_consent_first(client, panel):
    client.get(prolific_link(panel))

    page = client.get(reverse("panel-start", args=[panel.study.slug]))

    html = page.content.decode()
    assert page.status_code == 200
    assert "I have read this and agree to take part." in html
    assert "10 items, in at most 60 minutes" in html
    assert PROLIFIC_PID not in html


def test_the_start_page_reads_in_chinese_too(client, panel, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    client.get(prolific_link(panel))

    html = client.get(reverse("panel-start", args=[panel.study.slug])).content.decode()

    assert "我已阅读以上说明，同意参与。" in html
    assert "I have read this" not in html


def test_the_same_id_again_resumes_the_same_person(client, panel):
    client.get(prolific_link(panel))
    first = Participant.objects.get()
    client.logout()
    before = counts()

    response = client.get(prolific_link(panel))

    assert response.status_code == 302
    assert counts() == before
    assert Participant.objects.get() == first
    assert int(client.session["_auth_user_id"]) == first.user_id


def test_a_second_tab_with_the_same_id_is_the_same_person(client, panel):
    client.get(prolific_link(panel))
    other_tab = client.__class__()

    other_tab.get(prolific_link(panel))

    assert Participant.objects.count() == 1
    assert other_tab.session["_auth_user_id"] == client.session["_auth_user_id"]


def test_a_participant_who_completed_sees_the_same_code_and_gets_no_new_batch(client, panel):
    participant = panel_participant(panel)
    Participant.objects.filter(pk=participant.pk).update(
        state=ParticipantState.COMPLETED, code=panel.completion_code
    )
    before = counts()

    client.get(prolific_link(panel))
    page = client.get(reverse("panel-start", args=[panel.study.slug]), follow=True)
    html = page.content.decode()

    assert page.redirect_chain == [(reverse("panel-done", args=[panel.study.slug]), 302)]
    assert counts() == before
    assert Participant.objects.get().state == ParticipantState.COMPLETED
    assert "C1A2B3" in html
    assert "https://app.prolific.com/submissions/complete?cc=C1A2B3" in html
    assert "being prepared" not in html
    assert panel_participant(panel).code == "C1A2B3"


def test_someone_resuming_gets_in_even_when_the_study_is_paused_or_full(client, panel):
    panel_participant(panel)
    services.panel_configure(study=panel.study, actor=None, is_open=False, places=1)

    response = client.get(prolific_link(panel))

    assert response.status_code == 302
    assert Participant.objects.count() == 1


def generic_panel(study, *, is_open):
    """`study` on a panel other than Prolific (WJX, Credamo), whose id comes as `uid`."""
    return services.panel_configure(
        study=study,
        actor=None,
        provider="generic",
        id_parameter="uid",
        completion_url_template="https://panel.example/back?c={code}",
        completion_code="DONE",
        screen_out_code="OUT",
        items_per_participant=5,
        is_open=is_open,
    )


def test_a_generic_panel_reads_its_own_id_parameter(client, study):
    panel = generic_panel(study, is_open=True)

    response = client.get(join_url(study.slug, uid="wjx-778899", PROLIFIC_PID=PROLIFIC_PID))

    assert response.status_code == 302
    participant = Participant.objects.get(panel_study=panel)
    assert participant.pid == "wjx-778899" and participant.session_id == ""


@pytest.mark.parametrize(
    "parameters",
    [
        {},
        {"STUDY_ID": PROLIFIC_STUDY, "SESSION_ID": SESSION},
        {"PROLIFIC_PID": ""},
        {"PROLIFIC_PID": "{{%PROLIFIC_PID%}}"},
        {"PROLIFIC_PID": "<script>alert(1)</script>"},
        {"PROLIFIC_PID": "a b"},
        {"PROLIFIC_PID": "x" * 65},
        {"PROLIFIC_PID": "x" * 10_000},
        {"PROLIFIC_PID": "５f1e"},
        {"PROLIFIC_PID": PROLIFIC_PID, "SESSION_ID": "not a session"},
        {"PROLIFIC_PID": PROLIFIC_PID, "STUDY_ID": "y" * 65},
    ],
)
def test_a_missing_or_malformed_id_gets_a_clear_page_and_creates_nothing(client, panel, parameters):
    before = counts()

    response = client.get(join_url(panel.study.slug, **parameters))

    assert response.status_code == 400
    assert "This link cannot be used" in response.content.decode()
    assert "<script>alert" not in response.content.decode()
    assert counts() == before
    assert "_auth_user_id" not in client.session


def test_an_unknown_study_gets_a_clear_page_and_creates_nothing(client, panel):
    before = counts()

    response = client.get(join_url("no-such-study", PROLIFIC_PID=PROLIFIC_PID))

    assert response.status_code == 404
    assert "There is no study at this address." in response.content.decode()
    assert counts() == before


def test_a_study_not_on_a_panel_is_unknown_to_the_link(client, study):
    response = client.get(join_url(study.slug, PROLIFIC_PID=PROLIFIC_PID))

    assert response.status_code == 404
    assert not Participant.objects.exists()


def test_a_paused_study_turns_newcomers_away_and_creates_nothing(client, panel):
    services.panel_configure(study=panel.study, actor=None, is_open=False)
    before = counts()

    response = client.get(prolific_link(panel))

    assert response.status_code == 409
    assert "not taking participants at the moment" in response.content.decode()
    assert counts() == before


def test_a_closed_study_turns_newcomers_away(client, panel):
    Study.objects.filter(pk=panel.study_id).update(status=StudyStatus.CLOSED)
    before = counts()

    response = client.get(prolific_link(panel))

    assert response.status_code == 410
    assert counts() == before


def test_a_full_study_turns_newcomers_away_and_creates_nothing(client, panel):
    services.panel_configure(study=panel.study, actor=None, places=1)
    panel_participant(panel, pid="first-person")
    before = counts()

    response = client.get(prolific_link(panel))

    assert response.status_code == 409
    page = response.content.decode()
    assert "all the participants it needs" in page
    assert counts() == before
    # Told to give the study back, not to open it again, and offered no account here.
    assert 'data-testid="return-advice"' in page and "open the study from there again" not in page
    assert reverse("account_login") not in page and reverse("account_signup") not in page


def test_a_paused_study_on_another_panel_names_no_prolific_button(client, study, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    generic_panel(study, is_open=False)

    page = client.get(join_url(study.slug, uid="wjx-778899")).content.decode()

    assert 'data-testid="return-advice"' in page
    assert "Prolific" not in page and "Return submission" not in page
    assert "告知平台你未能参加" in page


def test_a_place_given_back_by_a_return_or_time_out_takes_a_newcomer(client, panel):
    services.panel_configure(study=panel.study, actor=None, places=2)
    Participant.objects.filter(pk=panel_participant(panel, pid="gave-up").pk).update(
        state=ParticipantState.RETURNED
    )
    Participant.objects.filter(pk=panel_participant(panel, pid="too-slow").pk).update(
        state=ParticipantState.TIMED_OUT
    )

    response = client.get(prolific_link(panel))

    assert response.status_code == 302
    assert Participant.objects.count() == 3


def test_the_join_link_answers_only_get(client, panel):
    assert client.post(prolific_link(panel)).status_code == 405
    assert not Participant.objects.exists()


def test_the_start_page_is_only_the_participants_own(client, panel, alice):
    client.force_login(alice)

    assert client.get(reverse("panel-start", args=[panel.study.slug])).status_code == 404


def test_the_start_page_of_another_study_is_not_found_for_a_participant(client, panel):
    client.get(prolific_link(panel))
    other = Study.objects.create(
        slug="other-study", name="Other", reference_source=panel.study.reference_source
    )
    make_panel_study(other)

    assert client.get(reverse("panel-start", args=["other-study"])).status_code == 404


def test_an_id_created_by_another_request_between_read_and_write_is_that_person(panel, monkeypatch):
    first = panel_participant(panel)
    before = counts()
    real = services.participants._existing
    reads = []

    def existing(*args):
        # The two reads before the write miss it, as they would while the other request's
        # transaction was still open on a database that does not queue the two.
        reads.append(args)
        return None if len(reads) <= 2 else real(*args)

    monkeypatch.setattr(services.participants, "_existing", existing)

    again = services.participant_join(panel_study=panel, pid=PROLIFIC_PID)

    assert again == first
    assert counts() == before
    assert len(reads) == 3


def test_the_link_opened_again_in_another_tab_leaves_the_first_tabs_form_working(panel):
    browser = Client(enforce_csrf_checks=True)
    browser.get(prolific_link(panel))
    start = reverse("panel-start", args=[panel.study.slug])
    first_tab = browser.get(start)
    token = first_tab.context["csrf_token"]

    browser.get(prolific_link(panel))
    posted = browser.post(
        start, {"csrfmiddlewaretoken": str(token), "step": "consent", "agree": "yes"}
    )

    assert posted.status_code == 302
    assert AnnotatorProfile.objects.get(user=Participant.objects.get().user).consented_at
