"""The staff dashboard of a panel study: participants by state, codes given, the median
time and the effective hourly pay; the payment file, apart from the research export and
only for those who pay; the link to it from the study's own dashboard."""

import csv
import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from django.urls import reverse

from panels import services
from panels.models import PanelStudy, Participant, ParticipantState
from tests.builders import (
    UserFactory,
    approved_annotator,
    make_panel_study,
    panel_participant,
    researcher_named,
    study_manager_named,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel(study):
    return make_panel_study(
        study, failed_checks_code="FAILCHK", reward_minor_units=250, currency="GBP"
    )


def ended(panel, pid, state, *, code="", minutes=30, reasons=None) -> Participant:
    """A participant who came with `pid` and whose batch ended as `state` after `minutes`."""
    participant = panel_participant(panel, pid)
    participant.state = state
    participant.code = code
    participant.finished_at = participant.started_at + timedelta(minutes=minutes)
    participant.review_reasons = reasons or {}
    participant.save()
    return participant


@pytest.fixture
def crowd(panel):
    """Two completed (20 and 40 min, one marked for review), one screened out, one who
    failed the checks, one who returned, one still rating."""
    return [
        ended(panel, "P1completed", ParticipantState.COMPLETED, code="C1A2B3", minutes=20),
        ended(
            panel,
            "P2completed",
            ParticipantState.COMPLETED,
            code="C1A2B3",
            minutes=40,
            reasons={"too_fast": 2},
        ),
        ended(panel, "P3screened", ParticipantState.SCREENED_OUT, code="SCREENED", minutes=3),
        ended(panel, "P4failed", ParticipantState.FAILED_CHECKS, code="FAILCHK", minutes=9),
        ended(panel, "P5returned", ParticipantState.RETURNED, minutes=5),
        panel_participant(panel, "P6rating"),
    ]


def dashboard(client, panel, **query):
    return client.get(reverse("staff-panel", args=[panel.study.slug]), query)


def figure(html: str, testid: str) -> str:
    start = html.index(f'data-testid="{testid}">') + len(f'data-testid="{testid}">')
    return html[start : html.index("<", start)].strip()


def test_a_manager_sees_participants_by_state_codes_time_and_hourly_pay(client, panel, crowd):
    client.force_login(study_manager_named("manager@example.com"))

    html = dashboard(client, panel).content.decode()

    assert figure(html, "state-started") == "1"
    assert figure(html, "state-completed") == "2"
    assert figure(html, "state-screened_out") == "1"
    assert figure(html, "state-failed_checks") == "1"
    assert figure(html, "state-returned") == "1"
    assert figure(html, "state-timed_out") == "0"
    assert figure(html, "awaiting-review") == "1"
    assert figure(html, "code-C1A2B3") == "2"
    assert figure(html, "code-SCREENED") == "1"
    assert figure(html, "code-FAILCHK") == "1"
    # Median of 20 and 40 minutes; £2.50 for 30 minutes is £5.00 an hour.
    assert figure(html, "median-time") == "30.0 min"
    assert figure(html, "hourly-pay") == "£5.00 per hour"
    assert "Implausibly fast × 2" in html
    # The wide layout: the review reasons and decisions are in view at 1280 px.
    assert '<main class="wide">' in html


def test_the_list_of_participants_can_be_narrowed_to_one_state(client, panel, crowd):
    client.force_login(study_manager_named("manager@example.com"))
    screened = crowd[2].user.annotator_profile.pseudonym
    completed = crowd[0].user.annotator_profile.pseudonym

    html = dashboard(client, panel, state="screened_out").content.decode()
    table = html[html.index('data-testid="participants"') :]

    assert screened in table and completed not in table
    # An unknown state shows everyone rather than an error.
    everyone = dashboard(client, panel, state="<script>").content.decode()
    assert completed in everyone and "<script>" not in everyone


def test_the_list_can_be_narrowed_to_those_awaiting_review(client, panel, crowd):
    """The figure on the page leads to the people it counts, before approving."""
    client.force_login(study_manager_named("manager@example.com"))
    flagged = crowd[1].user.annotator_profile.pseudonym
    unflagged = crowd[0].user.annotator_profile.pseudonym

    html = dashboard(client, panel, state="review").content.decode()
    table = html[html.index('data-testid="participants"') :]

    assert flagged in table and unflagged not in table
    assert '<a href="?state=review#participants">Awaiting review</a>' in html


def test_without_a_reward_or_a_completion_there_is_no_hourly_pay(client, study):
    panel = make_panel_study(study)
    client.force_login(study_manager_named("manager@example.com"))

    html = dashboard(client, panel).content.decode()

    assert figure(html, "median-time") == "—" and figure(html, "hourly-pay") == "—"


def test_a_manager_who_does_not_pay_never_sees_a_panel_id(client, panel, crowd):
    client.force_login(study_manager_named("manager@example.com"))

    html = dashboard(client, panel).content.decode()
    refused = client.get(reverse("staff-panel-payments", args=[panel.study.slug]))

    assert "P1completed" not in html and 'data-testid="payments-csv"' not in html
    assert refused.status_code == 403 and b"P1completed" not in refused.content


@pytest.mark.parametrize("payer", ["superuser", "granted"])
def test_those_who_pay_download_the_payment_file(client, panel, crowd, payer):
    if payer == "superuser":
        user = UserFactory(email="owner@example.com", is_staff=True, is_superuser=True)
    else:
        user = study_manager_named("payer@example.com")
        user.user_permissions.add(Permission.objects.get(codename="pay_participants"))
    crowd[0].bonus_minor_units = 75
    crowd[0].save()
    client.force_login(user)

    assert 'data-testid="payments-csv"' in dashboard(client, panel).content.decode()
    response = client.get(reverse("staff-panel-payments", args=[panel.study.slug]))

    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="{panel.study.slug}-payments.csv"'
    )
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_id = {row["panel_id"]: row for row in rows}
    assert len(rows) == 6
    assert by_id["P1completed"]["state"] == "completed"
    assert by_id["P1completed"]["code"] == "C1A2B3"
    assert by_id["P1completed"]["bonus"] == "0.75"
    assert by_id["P5returned"]["code"] == "" and by_id["P5returned"]["bonus"] == "0.00"
    # Nothing of the research data travels in the payment file.
    assert set(rows[0]) == {
        "panel_id",
        "session_id",
        "state",
        "code",
        "decision",
        "bonus",
        "started_at",
        "finished_at",
    }


@pytest.mark.parametrize("who", ["anonymous", "annotator", "researcher"])
def test_the_dashboard_is_for_study_managers(client, panel, crowd, luffy, who):
    if who == "annotator":
        client.force_login(approved_annotator("annotator@example.com", [luffy]))
    elif who == "researcher":
        client.force_login(researcher_named("researcher@example.com"))

    for url in ("staff-panel", "staff-panel-payments"):
        response = client.get(reverse(url, args=[panel.study.slug]))
        assert response.status_code in (302, 403), (url, response.status_code)
        assert b"P1completed" not in response.content


def test_a_study_without_a_panel_has_no_panel_dashboard(client, study):
    client.force_login(study_manager_named("manager@example.com"))

    assert client.get(reverse("staff-panel", args=[study.slug])).status_code == 404
    page = client.get(reverse("staff-study", args=[study.slug])).content.decode()
    assert 'data-testid="panel-section"' not in page


def test_the_study_dashboard_leads_to_its_panel(client, panel):
    client.force_login(study_manager_named("manager@example.com"))

    page = client.get(reverse("staff-study", args=[panel.study.slug])).content.decode()

    assert 'data-testid="panel-section"' in page
    assert reverse("staff-panel", args=[panel.study.slug]) in page


def test_the_number_of_places_reads_in_the_singular_too(client, panel):
    client.force_login(study_manager_named("manager@example.com"))
    services.panel_configure(study=panel.study, actor=None, places=1)

    html = dashboard(client, panel).content.decode()

    assert 'data-testid="places">0 of 1 place taken</span>' in html and "1 places" not in html


def test_the_dashboard_reads_in_chinese(client, panel, crowd, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    client.force_login(study_manager_named("manager@example.com"))

    html = dashboard(client, panel).content.decode()

    assert "等待审核" in html and "实际时薪" in html and "每小时 £5.00" in html


def test_the_reward_and_currency_are_set_by_the_command(study):
    make_panel_study(study)

    call_command("study_panel", study.slug, "--reward", "2.5", "--currency", "usd")

    panel = PanelStudy.objects.get(study=study)
    assert (panel.reward_minor_units, panel.currency) == (250, "USD")


@pytest.mark.parametrize(
    ("option", "value"),
    [("--reward", "2.555"), ("--reward", "-1"), ("--reward", "two"), ("--currency", "XYZ")],
)
def test_a_bad_reward_or_currency_is_refused_by_name_and_changes_nothing(study, option, value):
    make_panel_study(study, reward_minor_units=100)

    with pytest.raises(CommandError, match=option):
        call_command("study_panel", study.slug, option, value)

    panel = PanelStudy.objects.get(study=study)
    assert (panel.reward_minor_units, panel.currency) == (100, "GBP")


def test_the_dashboard_says_how_many_places_are_taken(client, panel):
    client.force_login(study_manager_named("manager@example.com"))
    services.panel_configure(study=panel.study, actor=None, places=40)
    panel_participant(panel, pid="here-1")
    panel_participant(panel, pid="here-2")
    gone = panel_participant(panel, pid="gone")
    Participant.objects.filter(pk=gone.pk).update(state=ParticipantState.RETURNED)

    html = dashboard(client, panel).content.decode()

    assert "2 of 40 places taken" in html
