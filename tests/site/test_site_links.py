"""Links that leave the site (the screening decision email, the panel join link) open the
site where staff reached it, unless CHATANIME_SITE_URL names the address; a link made
with no request (the `study_panel` command) uses CHATANIME_SITE_URL or its default."""

import pytest
from django.core import mail
from django.urls import reverse

from annotation.models import Qualification
from tests.builders import applicant_who_passed, make_panel_study
from tests.fixtures.services import REPO
from tests.helpers import run_manage

pytestmark = pytest.mark.django_db

# Where staff reached the demo: another port than the default link's 8000.
DEMO = {"SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8772", "HTTP_HOST": "127.0.0.1:8772"}


def decide_on_the_staff_page(client, fan, decision: str) -> None:
    """The manager's decision on the fan's application, sent from where DEMO says."""
    qualification = Qualification.objects.get(profile__user=fan)
    client.post(
        "/staff/screening/review/",
        {"qualification": [qualification.pk], "decision": decision},
        **DEMO,
    )


def test_a_decision_email_links_to_the_site_as_the_manager_reached_it(
    client, manager, question_bank, luffy, settings, django_capture_on_commit_callbacks
):
    settings.SITE_URL_SET, settings.SITE_URL = False, "http://127.0.0.1:8000"
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    fan = applicant_who_passed("fan@example.com", [luffy])
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        decide_on_the_staff_page(client, fan, "approve")

    [email] = mail.outbox
    assert "http://127.0.0.1:8772/screening/" in email.body
    assert ":8000" not in email.body


def test_a_decision_made_in_the_admin_links_the_same_way(
    admin_client, question_bank, luffy, settings, django_capture_on_commit_callbacks
):
    settings.SITE_URL_SET, settings.SITE_URL = False, "http://127.0.0.1:8000"
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    fan = applicant_who_passed("fan@example.com", [luffy])

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            "/admin/annotation/qualification/",
            {
                "action": "reject",
                "_selected_action": [Qualification.objects.get(profile__user=fan).pk],
            },
            **DEMO,
        )

    [email] = mail.outbox
    assert "http://127.0.0.1:8772/screening/" in email.body


def test_a_site_url_set_explicitly_wins_over_the_request(
    client, manager, question_bank, luffy, settings, django_capture_on_commit_callbacks
):
    settings.SITE_URL_SET, settings.SITE_URL = True, "https://rate.example.org/"
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    fan = applicant_who_passed("fan@example.com", [luffy])
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        decide_on_the_staff_page(client, fan, "reject")

    [email] = mail.outbox
    assert "https://rate.example.org/screening/" in email.body


def test_the_panel_page_shows_the_join_link_on_the_address_staff_reached(
    client, manager, study, settings
):
    settings.SITE_URL_SET, settings.SITE_URL = False, "http://127.0.0.1:8000"
    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    panel = make_panel_study(study)
    client.force_login(manager)

    html = client.get(reverse("staff-panel", args=[study.slug]), **DEMO).content.decode()

    assert f"http://127.0.0.1:8772/join/{study.slug}/?PROLIFIC_PID=" in html
    assert f"http://127.0.0.1:8000/join/{panel.study.slug}/" not in html


def test_an_empty_site_url_counts_as_unset(settings):
    """Compose hands the variable on empty when the operator has not set it."""
    shown = "from django.conf import settings; print(settings.SITE_URL, settings.SITE_URL_SET)"

    result = run_manage("shell", "--no-imports", "-c", shown, env={"CHATANIME_SITE_URL": ""})

    assert result.stdout.split() == ["http://127.0.0.1:8000", "False"], result.stderr
    assert (
        "CHATANIME_SITE_URL: ${CHATANIME_SITE_URL:-}" in (REPO / "docker-compose.yml").read_text()
    )
