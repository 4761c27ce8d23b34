import json
from io import StringIO

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.fixtures.faults import free_port
from tests.helpers import run_manage

pytestmark = pytest.mark.django_db

User = get_user_model()


def seed(password="s3cret-demo"):
    out = StringIO()
    call_command("seed_demo", "--password", password, stdout=out)
    return out.getvalue()


def test_seed_demo_creates_the_demo_accounts_and_says_how_to_log_in():
    output = seed()

    emails = set(User.objects.values_list("email", flat=True))
    assert emails == {
        "admin@example.com",
        "manager@example.com",
        "researcher@example.com",
        "annotator1@example.com",
        "annotator2@example.com",
        "annotator3@example.com",
    }
    assert "annotator1@example.com" in output and "s3cret-demo" in output
    assert "/accounts/login/" in output
    assert User.objects.get(email="admin@example.com").is_superuser
    assert not User.objects.get(email="annotator1@example.com").is_staff
    assert EmailAddress.objects.filter(verified=True, primary=True).count() == 6
    manager = User.objects.get(email="manager@example.com")
    assert not manager.is_staff and manager.groups.filter(name="study managers").exists()


def test_seed_demo_is_idempotent():
    seed()
    seed(password="another-one")

    assert User.objects.count() == 6
    assert EmailAddress.objects.count() == 6
    assert User.objects.get(email="annotator2@example.com").check_password("another-one")


def test_a_demo_annotator_can_log_in_by_email(client):
    seed()

    response = client.post(
        "/accounts/login/", {"login": "annotator1@example.com", "password": "s3cret-demo"}
    )

    assert response.status_code == 302
    assert client.session.get("_auth_user_id")


def test_the_home_page_speaks_chinese_by_default(client, settings):
    settings.LANGUAGE_CODE = "zh-hans"

    response = client.get("/")

    assert response.status_code == 200
    assert '<html lang="zh-hans">' in response.content.decode()


def test_the_health_check_reports_the_database(client):
    response = client.get("/health/")

    assert response.status_code == 200
    body = json.loads(response.content)
    assert body["database"] == "ok"
    assert body["worker_seen_seconds_ago"] is None


# The site runs in its own process against a PostgreSQL address where nothing listens,
# so every query fails as it does in an outage, and the test database is left alone.
HEALTH_REQUEST = """
from django.test import Client
response = Client(SERVER_NAME="localhost").get("/health/")
print(response.status_code, response["Content-Type"])
print(response.content.decode())
"""


def test_the_health_check_answers_json_while_the_database_is_unreachable():
    finished = run_manage(
        "shell",
        "--no-imports",
        "-c",
        HEALTH_REQUEST,
        env={
            "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.test",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{free_port()}/chatanime",
        },
    )

    assert finished.returncode == 0, finished.stderr
    status_line, body = finished.stdout.split("\n", 1)
    assert status_line == "503 application/json"
    assert json.loads(body) == {
        "database": "unreachable",
        "broker": "in-process",
        "worker_seen_seconds_ago": None,
    }


def test_the_api_schema_is_served(client):
    response = client.get("/api/schema/")

    assert response.status_code == 200
    assert b"openapi" in response.content


@pytest.mark.parametrize("url", ["/admin/dialogues/answer/", "/admin/dialogues/source/"])
def test_staff_can_browse_answers_and_sources(client, demo_dataset, url):
    seed()
    client.force_login(User.objects.get(email="admin@example.com"))

    response = client.get(url)

    assert response.status_code == 200


@pytest.mark.parametrize("email", ["annotator1@example.com", "researcher@example.com"])
@pytest.mark.parametrize("url", ["/admin/dialogues/answer/", "/admin/dialogues/source/"])
def test_non_staff_cannot_browse_answers(client, demo_dataset, email, url):
    seed()
    client.force_login(User.objects.get(email=email))

    response = client.get(url)

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_the_metrics_come_back_after_a_flush():
    from annotation.models import Metric

    call_command("flush", "--noinput", stdout=StringIO())

    assert Metric.objects.count() == 10


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "title"), [("en", "Sign up ·"), ("zh-hans", "注册 ·")])
def test_the_sign_up_page_is_named_as_its_button_in_the_tab(client, language, title):
    client.cookies["django_language"] = language
    page = client.get(reverse("account_signup")).content.decode()
    assert f"<title>{title}" in " ".join(page.split())  # not allauth's "Signup"


@pytest.mark.django_db
def test_rating_and_writing_are_offered_to_fans_not_to_researchers_or_staff(client):
    from tests.builders import UserFactory, researcher_named, study_manager_named

    for person, offered in (
        (UserFactory(email="fan@example.com"), True),
        (researcher_named("scientist@example.com"), False),
        (study_manager_named("boss@example.com"), False),
        (UserFactory(email="root@example.com", is_staff=True), False),
    ):
        client.force_login(person)
        page = client.get("/").content.decode()
        assert ('data-testid="write-nav"' in page) is offered, person.email
        assert ('data-testid="rate-nav"' in page) is offered, person.email


@pytest.mark.django_db
def test_the_header_names_signing_in_and_up_as_the_account_pages_do(client):
    """One verb for one act: the header's links read as the headings they lead to."""
    import re

    client.cookies["django_language"] = "en"
    header = client.get("/").content.decode()
    login = client.get(reverse("account_login")).content.decode()
    signup = client.get(reverse("account_signup")).content.decode()

    def heading(page):
        return re.search(r"<h1[^>]*>\s*(.*?)\s*</h1>", page, re.S).group(1).strip().lower()

    assert f'href="{reverse("account_login")}">Sign in</a>' in header
    assert f'href="{reverse("account_signup")}">Sign up</a>' in header
    assert heading(login) == "sign in" and heading(signup) == "sign up"
