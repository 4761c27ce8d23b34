"""Accounts through django-allauth: sign-up, verification, reset, throttled log-in."""

import re

import pytest
from django.core import mail

from tests.builders import UserFactory

pytestmark = pytest.mark.django_db


def test_sign_up_with_mandatory_verification_sends_a_confirmation_email(client, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"

    response = client.post(
        "/accounts/signup/",
        {"email": "fan@example.com", "password1": "a-Long-pass-42", "password2": "a-Long-pass-42"},
    )

    assert response.status_code == 302
    assert "/accounts/confirm-email/" in response["Location"]
    assert len(mail.outbox) == 1
    link = re.search(r"/accounts/confirm-email/\S+/", mail.outbox[0].body).group(0)
    client.post(link)
    from allauth.account.models import EmailAddress

    assert EmailAddress.objects.get(email="fan@example.com").verified


def test_an_unverified_account_cannot_log_in_when_verification_is_mandatory(client, settings):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    UserFactory(email="late@example.com", password="a-Long-pass-42")

    client.post("/accounts/login/", {"login": "late@example.com", "password": "a-Long-pass-42"})

    assert "_auth_user_id" not in client.session


def test_password_reset_sends_a_link(client):
    UserFactory(email="forgetful@example.com")

    response = client.post("/accounts/password/reset/", {"email": "forgetful@example.com"})

    assert response.status_code == 302
    assert "/accounts/password/reset/key/" in mail.outbox[-1].body


def test_repeated_failed_log_ins_are_throttled(client):
    UserFactory(email="target@example.com", password="the-right-one-42")
    for _ in range(5):
        client.post("/accounts/login/", {"login": "target@example.com", "password": "wrong"})

    response = client.post(
        "/accounts/login/", {"login": "target@example.com", "password": "the-right-one-42"}
    )

    assert "_auth_user_id" not in client.session
    assert response.status_code in (200, 429)
    assert "Too many failed login attempts" in response.content.decode()


def test_logging_out_ends_the_session(client):
    user = UserFactory(email="leaving@example.com")
    client.force_login(user)

    client.post("/accounts/logout/")

    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    ("language", "greeting"),
    [("en", "Hello from ChatAnime!"), ("zh-hans", "你好，这里是 ChatAnime！")],
)
def test_account_emails_name_the_platform_not_the_host(client, settings, language, greeting):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    client.cookies["django_language"] = language

    client.post(
        "/accounts/signup/",
        {"email": "fan@example.com", "password1": "a-Long-pass-42", "password2": "a-Long-pass-42"},
    )

    [email] = mail.outbox
    assert email.subject.startswith("[ChatAnime] ")
    assert email.body.startswith(greeting)
    assert "testserver!" not in email.body and "Hello!" not in email.body


def test_a_new_account_is_greeted_by_its_email_not_a_made_up_user_name(client):
    response = client.post(
        "/accounts/signup/",
        {
            "email": "new.fan@example.com",
            "password1": "a-Long-pass-42",
            "password2": "a-Long-pass-42",
        },
        follow=True,
    )

    said = [str(message) for message in response.context["messages"]]
    assert any("new.fan@example.com" in text for text in said), said
