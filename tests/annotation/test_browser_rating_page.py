"""The rating page in a real browser: keys do what they say, Back never brings a
submitted item back, nothing breaks the Content Security Policy, and a phone gets
tap targets it can hit."""

import re

import pytest

from annotation.models import Assignment, AssignmentState, Judgment
from tests.builders import lease_pair
from tests.fixtures.browser import RECORD_VIOLATIONS, session_cookie

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}


def open_as(new_page, live_server, user, path, **options):
    """A page logged in as `user` that records console errors, uncaught exceptions and
    policy violations from its first script on."""
    page = new_page(**options)
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.context.add_cookies([session_cookie(live_server, user)])
    page.errors = []
    page.on(
        "console",
        lambda message: page.errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(f"{live_server.url}{path}")
    return page


def problems(page):
    return page.errors + page.evaluate("window.__cspViolations || []")


def ready_form(page):
    form = page.locator("form.rating-form[data-ready]")
    form.wait_for()
    return form


def rate_with_digits(page):
    form = ready_form(page)
    for _ in range(form.locator("fieldset.scale").count()):
        page.keyboard.press("4")
    for _ in range(form.locator("fieldset.choice").count()):
        page.keyboard.press("1")


def wait_for_other_item(page, token):
    page.wait_for_function("token => !location.pathname.includes(token)", arg=token)
    ready_form(page)


def test_enter_on_the_focused_skip_button_skips(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    ready_form(page)
    rate_with_digits(page)  # a complete rating must not be what Enter sends

    page.focus("details.skip summary")
    page.keyboard.press("Enter")  # a disclosure opens with Enter
    assert page.locator("details.skip").evaluate("d => d.open")
    page.focus("details.skip button[type=submit]")
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)

    lease.refresh_from_db()
    assert lease.state == AssignmentState.SKIPPED
    assert not Judgment.objects.filter(assignment=lease).exists()
    assert problems(page) == []


def test_a_skip_on_a_phone_shows_the_next_item_from_its_top(live_server, new_page, rater):
    """The skip form is at the bottom of a long item: the next item and the notice that
    the skipped one will not come back must come into view, as after a submission."""
    lease = lease_pair(rater)
    lease_pair(rater)  # a next item to show
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    ready_form(page)

    page.locator("details.skip summary").click()
    page.locator("details.skip button[type=submit]").click()
    wait_for_other_item(page, lease.token)

    top = page.evaluate("document.querySelector('#work').getBoundingClientRect().top")
    assert -2 <= top < PHONE["height"] / 2  # within a pixel of the top (sub-pixel layout)
    assert problems(page) == []


def test_an_unrated_row_is_complained_about_in_the_pages_language(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    page.context.add_cookies(
        [{"name": "django_language", "value": "zh-hans", "url": live_server.url}]
    )
    page.reload()
    form = ready_form(page)
    first = form.locator("input[type=radio][required]").first

    assert form.evaluate("f => f.checkValidity()") is False
    assert first.evaluate("r => r.validationMessage") == "请选择其中一项。"
    # Choosing another button of the same row puts the whole row right.
    name = first.get_attribute("name")
    # (the button's label is what a person clicks; the input itself is drawn by it)
    form.locator(f"label:has(> input[type=radio][name='{name}'])").last.click()
    assert first.evaluate("r => r.validity.valid") is True
    assert problems(page) == []


def test_enter_keeps_its_native_meaning_outside_the_rating_rows(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    form = ready_form(page)
    rate_with_digits(page)

    # On a definition Enter opens it, in the comment it starts a new line, and digits
    # typed there are text, not ratings: nothing is submitted.
    summary = form.locator("details.definition summary").first
    summary.focus()
    page.keyboard.press("Enter")
    assert form.locator("details.definition").first.evaluate("d => d.open")
    comment = form.locator("textarea[name=comment]")
    comment.focus()
    page.keyboard.type("第一行")
    page.keyboard.press("Enter")
    page.keyboard.type("2")
    assert comment.input_value() == "第一行\n2"
    assert form.locator("fieldset.scale input:checked[value='2']").count() == 0
    assert not Judgment.objects.exists()
    assert lease.token in page.url


def test_the_hint_explains_every_key(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")

    hint = page.get_by_test_id("shortcuts").inner_text()

    for key in ("1–5", "1 = A", "2 = B", "3 = tie", "↑ ↓", "Enter", "Tab"):
        assert key in hint, key


def test_keyboard_only_rating_reaches_submit_in_a_few_tab_stops(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    ready_form(page)

    # From the top of the page: Tab until the skip link, which jumps to Submit.
    stops = 0
    while not page.evaluate("document.activeElement.matches('a.to-submit')"):
        page.keyboard.press("Tab")
        stops += 1
        assert stops < 10, "the skip link should come right after the top bar"
    assert page.locator("a.to-submit").is_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "submit-rating"

    # Every row is a single Tab stop (a radio group), so walking all of them is short too.
    page.focus("form.rating-form details.definition summary")
    walked = 0
    while page.evaluate("document.activeElement.id") != "submit-rating":
        page.keyboard.press("Tab")
        walked += 1
        assert walked < 34

    # Rating with digits only and Enter still submits.
    page.focus("form.rating-form fieldset.scale input")
    rate_with_digits(page)
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    assert Judgment.objects.filter(assignment=lease).count() == 1
    assert problems(page) == []


def test_back_after_submitting_shows_the_next_item(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    rate_with_digits(page)
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    following = Assignment.objects.get(annotator=rater, state=AssignmentState.ACTIVE)

    page.go_back()
    page.wait_for_selector(".messages li")
    ready_form(page)

    assert page.url.endswith(f"/annotate/{following.token}/")
    assert page.locator(f"form[action='/annotate/{lease.token}/']").count() == 0
    assert "already submitted" in page.locator(".messages").inner_text()
    assert Judgment.objects.filter(annotator=rater).count() == 1
    assert problems(page) == []


def test_no_annotator_page_logs_an_error(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, "/annotate/")
    ready_form(page)
    for path in ("/screening/", "/", f"/annotate/{lease.token}/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
    ready_form(page)
    # Submit, skip, go back and reload: htmx swaps and history must comply as well.
    rate_with_digits(page)
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    page.locator("details.skip summary").click()
    page.locator("details.skip button[type=submit]").click()
    page.wait_for_load_state("networkidle")
    page.go_back()
    page.wait_for_selector(".messages li")
    ready_form(page)
    page.reload()
    page.wait_for_load_state("networkidle")

    assert problems(page) == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_page_opens_at_its_title(live_server, new_page, rater, viewport):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=viewport)
    ready_form(page)

    assert page.evaluate("window.scrollY") == 0
    assert page.locator(".item-head h1").is_visible()


def test_on_a_phone_every_rating_control_is_a_44_px_target(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(
        new_page,
        live_server,
        rater,
        f"/annotate/{lease.token}/",
        viewport=PHONE,
        is_mobile=True,
        has_touch=True,
    )
    ready_form(page)

    targets = page.locator(
        "form.rating-form fieldset.group label, form.rating-form details.definition summary, "
        "details.skip summary, form.rating-form button[type=submit]"
    )
    assert targets.count() > 40
    small = []
    for target in targets.all():
        box = target.bounding_box()
        if box["width"] < 44 or box["height"] < 44:
            small.append((target.inner_text(), round(box["width"]), round(box["height"])))
    assert small == []
    assert not page.get_by_test_id("shortcuts").is_visible()
    line = page.evaluate(
        "parseFloat(getComputedStyle(document.querySelector('.topbar')).lineHeight)"
    )
    topbar = page.locator(".topbar").bounding_box()
    assert topbar["height"] < 2 * line + 20, "the top bar is one line"
    assert page.evaluate("document.documentElement.scrollWidth") <= 375


def test_the_account_pages_wear_the_site_style(live_server, new_page):
    page = new_page(viewport=PHONE)
    for path in ("/accounts/signup/", "/accounts/login/", "/accounts/password/reset/"):
        page.goto(f"{live_server.url}{path}")
        card = page.locator("main section.card.account")
        assert card.count() == 1, path
        assert card.locator("form.account-form").count() == 1, path
        field = card.locator("input[type=email]").first.bounding_box()
        assert field["width"] > 250, path  # full width, not a bare browser default
        assert re.search(
            r"rgb\(194, 24, 91\)",
            card.locator("button[type=submit]").evaluate(
                "b => getComputedStyle(b).backgroundColor"
            ),
        ), path
