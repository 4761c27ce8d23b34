"""The staff start forms in a real browser (Debian's Chromium via Playwright): a box typed
into (a number of pairs, a list of scenarios) looks like the lists beside it."""

import pytest

from collection.models import ModelEndpoint
from tests.builders import UserFactory
from tests.fixtures.browser import session_cookie

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOOKS = [
    "border-top-width",
    "border-top-style",
    "border-top-color",
    "border-radius",
    "padding-left",
    "padding-top",
    "font-family",
    "font-size",
]
LOOK_OF = """element => {
  const style = getComputedStyle(element);
  return Object.fromEntries(%s.map(name => [name, style.getPropertyValue(name)]));
}"""


@pytest.mark.parametrize(
    "path, box, beside",
    [
        ("/staff/judges/", "#items", "#study"),
        ("/staff/collection/", "#scenarios", "#endpoint"),
    ],
)
def test_a_start_forms_number_box_looks_like_its_lists(live_server, new_page, path, box, beside):
    # The start forms are shown once there is an endpoint to start with.
    ModelEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    admin = UserFactory(email="admin@example.com", is_staff=True, is_superuser=True)
    page = new_page()
    page.context.add_cookies([session_cookie(live_server, admin)])
    page.goto(f"{live_server.url}{path}")

    look = LOOK_OF % LOOKS
    assert page.locator(box).evaluate(look) == page.locator(beside).evaluate(look)


def test_a_sign_up_error_reads_as_an_error_above_its_own_field(live_server, new_page):
    """Django's paragraphs put a field's errors before the field's <p>: unstyled, a password
    error read as grey help under the email box."""
    page = new_page(viewport={"width": 390, "height": 800})
    page.goto(f"{live_server.url}/accounts/signup/")
    page.fill("input[name=email]", "fan@example.com")
    page.fill("input[name=password1]", "abc")
    page.fill("input[name=password2]", "abc")
    page.click("main button[type=submit]")
    page.wait_for_selector("ul.errorlist")

    error = page.locator("ul.errorlist").first
    assert "too short" in error.inner_text()
    help_colour = page.locator(".helptext").first.evaluate("e => getComputedStyle(e).color")
    assert error.evaluate("e => getComputedStyle(e).color") != help_colour
    below_email = page.locator("#id_email").bounding_box()
    box = error.bounding_box()
    label = page.locator("label[for=id_password1]").bounding_box()
    gap_above = box["y"] - (below_email["y"] + below_email["height"])
    gap_below = label["y"] - (box["y"] + box["height"])
    assert gap_below < gap_above  # nearer the password's label than the email box


def test_the_browsers_complaints_speak_the_pages_language(live_server, new_page):
    """A Chinese page in an English browser: an empty box, a wrong email and an unticked
    consent are complained about in Chinese, and a box put right is accepted."""
    fan = UserFactory(email="fan@example.com")
    page = new_page()
    page.context.add_cookies(
        [
            session_cookie(live_server, fan),
            {"name": "django_language", "value": "zh-hans", "url": live_server.url},
        ]
    )
    page.goto(f"{live_server.url}/screening/consent/")
    tick = page.locator("input[type=checkbox][required]").first
    assert tick.evaluate("box => box.form.checkValidity()") is False
    assert tick.evaluate("box => box.validationMessage") == "请勾选此项后继续。"
    tick.check()
    assert tick.evaluate("box => box.form.checkValidity()") is True

    page.context.clear_cookies()
    page.context.add_cookies(
        [{"name": "django_language", "value": "zh-hans", "url": live_server.url}]
    )
    page.goto(f"{live_server.url}/accounts/signup/")
    email = page.locator("#id_email")
    assert email.evaluate("box => box.form.checkValidity()") is False
    assert email.evaluate("box => box.validationMessage") == "请填写此项。"
    email.fill("fan")
    assert email.evaluate("box => (box.form.checkValidity(), box.validationMessage)") == (
        "请输入电子邮件地址，例如 name@example.com。"
    )
