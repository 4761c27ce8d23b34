"""Resetting a forgotten password in a real browser: the Cancel beside "Change password"
does not look like the action itself, and the last page leads on to signing in."""

import re

import pytest
from django.core import mail

from tests.builders import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACCENT = "rgb(194, 24, 91)"


def background(locator):
    return locator.evaluate("b => getComputedStyle(b).backgroundColor")


def test_a_password_reset_ends_with_the_way_to_sign_in(live_server, new_page):
    UserFactory(email="forgetful@example.com")
    page = new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{live_server.url}/accounts/password/reset/")
    page.fill("input[name=email]", "forgetful@example.com")
    page.locator("form.account-form button[type=submit]").click()
    page.wait_for_url("**/accounts/password/reset/done/")
    path = re.search(r"/accounts/password/reset/key/\S+/", mail.outbox[-1].body).group(0)

    page.goto(f"{live_server.url}{path}")
    page.locator("input[name=password1]").wait_for()
    change = page.locator("form.account-form button[name=action]")
    cancel = page.locator("button[form=logout-from-stage]")
    assert background(change) == ACCENT
    assert background(cancel) != ACCENT

    page.fill("input[name=password1]", "Sakura-2027-fan")
    page.fill("input[name=password2]", "Sakura-2027-fan")
    change.click()
    page.wait_for_url("**/accounts/password/reset/key/done/")
    page.get_by_test_id("sign-in-again").click()
    page.wait_for_url("**/accounts/login/")
    page.fill("input[name=login]", "forgetful@example.com")
    page.fill("input[name=password]", "Sakura-2027-fan")
    page.locator("form.account-form button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")
    assert "Sign out" in page.locator("header").inner_text()
