"""A participant leaves a study from the rating page on a phone, in a real browser: the
way out is under their item, asks once, and their lease is free the moment they confirm."""

import re

import pytest

from annotation.models import Assignment, AssignmentState, Judgment
from panels.models import Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, make_study
from tests.fixtures.browser import rate_current_item_with_the_keyboard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}


def tap_height(locator) -> float:
    return locator.bounding_box()["height"]


def test_leaving_from_the_rating_page_on_a_phone(
    live_server, new_page, demo_dataset, luffy, settings
):
    settings.LANGUAGE_CODE = "en"
    panel = make_panel_study(make_study(characters=[luffy]), items_per_participant=3)
    base = live_server.url
    page = new_page(viewport=PHONE)

    page.goto(f"{base}/join/{panel.study.slug}/?PROLIFIC_PID={PROLIFIC_PID}&SESSION_ID=s-1")
    page.wait_for_url(re.compile(r"/start/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_selector("input[name=characters]")
    page.check(f"input[name=characters][value='{luffy.pk}']")
    page.click("main button[type=submit]")
    page.get_by_test_id("panel-begin").click()
    # Half-way: one item rated, the next one leased and on the screen.
    rate_current_item_with_the_keyboard(page)
    page.locator("form.rating-form[data-ready]").wait_for()

    leave = page.get_by_test_id("work-leave")
    assert tap_height(leave) >= 44
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    leave.click()
    page.wait_for_url(re.compile(r"/leave/$"))
    confirm = page.get_by_test_id("panel-leave-confirm")
    assert tap_height(confirm) >= 44
    assert tap_height(page.get_by_test_id("panel-leave-cancel")) >= 44
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    participant = Participant.objects.get()
    assert Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()

    confirm.click()
    page.get_by_test_id("panel-left").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED
    assert Judgment.objects.filter(annotator=participant.user).count() == 1
    assert not Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()
