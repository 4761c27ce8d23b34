"""A panel participant on a phone who fails two attention checks, in a real browser: the
rating page hands them to each check, the answers are big buttons that fit the screen,
and the second failure ends on the failed-checks code and its link back to Prolific."""

import re

import pytest

from annotation.models import Assignment, AssignmentState
from panels import checks
from panels.models import CheckAnswer, Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
FAILED_CODE = "FAILED9"


def submit_item(page):
    """Every scale and choice with the keyboard, then Enter; waits for nothing after."""
    form = page.locator("form.rating-form[data-ready]")
    form.wait_for()
    for _ in range(form.locator("fieldset.scale").count()):
        page.keyboard.press("4")
    for _ in range(form.locator("fieldset.choice").count()):
        page.keyboard.press("1")
    page.keyboard.press("Enter")


def fits_the_phone(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def fail_the_check(page):
    """Tap an answer the question did not ask for; every answer a full thumb's size."""
    page.get_by_test_id("panel-check").wait_for()
    fits_the_phone(page)
    key = page.locator("input[name=check]").get_attribute("value")
    check = checks.BY_KEY[key]
    assert page.get_by_test_id("check-prompt").inner_text().strip() == check.en
    buttons = page.get_by_test_id("check-choice")
    assert buttons.count() == len(check.choices)
    for index in range(buttons.count()):
        box = buttons.nth(index).bounding_box()
        assert box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    wrong = next(choice.key for choice in check.choices if choice.key != check.instructed)
    page.locator(f"button[name=choice][value='{wrong}']").click()


def test_a_participant_who_fails_two_checks_ends_on_the_failed_checks_link(
    live_server, new_page, demo_dataset, luffy, settings
):
    settings.LANGUAGE_CODE = "en"
    panel = make_panel_study(
        make_study(characters=[luffy]),
        items_per_participant=3,
        check_positions=[1, 2],
        failed_checks_code=FAILED_CODE,
    )
    base = live_server.url
    page = new_page(viewport=PHONE)

    page.goto(f"{base}/join/{panel.study.slug}/?PROLIFIC_PID={PROLIFIC_PID}")
    page.wait_for_url(re.compile(r"/start/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_selector("input[name=characters]")
    page.check(f"input[name=characters][value='{luffy.pk}']")
    page.click("main button[type=submit]")
    page.get_by_test_id("panel-begin").click()

    submit_item(page)
    page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/check/$"))
    fail_the_check(page)
    page.wait_for_url(re.compile(r"/annotate/[^/]+/$"))
    submit_item(page)
    page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/check/$"))
    fail_the_check(page)
    page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/done/$"))

    page.get_by_test_id("panel-failed-checks").wait_for()
    assert FAILED_CODE in page.get_by_test_id("panel-code").inner_text()
    link = page.get_by_test_id("panel-complete")
    assert link.get_attribute("href") == (
        f"https://app.prolific.com/submissions/complete?cc={FAILED_CODE}"
    )
    fits_the_phone(page)
    participant = Participant.objects.get()
    assert (participant.state, participant.code) == (ParticipantState.FAILED_CHECKS, FAILED_CODE)
    assert list(CheckAnswer.objects.values_list("position", "passed")) == [(1, False), (2, False)]
    assert not Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()
