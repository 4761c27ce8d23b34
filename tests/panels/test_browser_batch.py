"""A panel participant's whole batch on a phone, in a real browser: from the Prolific link
through consent, characters and the items (the rating page with the keyboard) to the
completion page and its link back to Prolific; coming back afterwards gives the same code,
never a second one."""

import re

import pytest

from panels.models import Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, make_study
from tests.fixtures.browser import rate_current_item_with_the_keyboard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
ITEMS = 2


def test_from_the_prolific_link_to_the_completion_link_on_a_phone(
    live_server, new_page, demo_dataset, luffy, settings
):
    settings.LANGUAGE_CODE = "en"
    panel = make_panel_study(make_study(characters=[luffy]), items_per_participant=ITEMS)
    base = live_server.url
    page = new_page(viewport=PHONE)

    page.goto(f"{base}/join/{panel.study.slug}/?PROLIFIC_PID={PROLIFIC_PID}")
    page.wait_for_url(re.compile(r"/start/$"))
    # On a phone the whole line of a choice is its tap target, 44 px at least.
    assert page.locator("label:has(input[name=agree])").bounding_box()["height"] >= 44
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_selector("input[name=characters]")
    choice = page.locator(f"label:has(input[name=characters][value='{luffy.pk}'])")
    assert choice.bounding_box()["height"] >= 44
    page.check(f"input[name=characters][value='{luffy.pk}']")
    page.click("main button[type=submit]")
    page.get_by_test_id("panel-begin").click()

    for _ in range(ITEMS - 1):
        rate_current_item_with_the_keyboard(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # The last item: the rating page hands the participant to their completion page.
    page.locator("form.rating-form[data-ready]").wait_for()
    form = page.locator("form.rating-form[data-ready]")
    for _ in range(form.locator("fieldset.scale").count()):
        page.keyboard.press("4")
    for _ in range(form.locator("fieldset.choice").count()):
        page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/done/$"))

    assert "C1A2B3" in page.get_by_test_id("panel-code").inner_text()
    link = page.get_by_test_id("panel-complete")
    assert link.get_attribute("href") == ("https://app.prolific.com/submissions/complete?cc=C1A2B3")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    participant = Participant.objects.get()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")

    # A second visit from the panel's link, or to the rating page, after completion: the
    # same page and code, never a second batch or a second code.
    finished_at = participant.finished_at
    for again in (f"/join/{panel.study.slug}/?PROLIFIC_PID={PROLIFIC_PID}", "/annotate/"):
        page.goto(base + again)
        page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/done/$"))
        assert "C1A2B3" in page.get_by_test_id("panel-code").inner_text()
        assert page.locator("form.rating-form").count() == 0
    participant.refresh_from_db()
    assert Participant.objects.count() == 1 and participant.finished_at == finished_at
