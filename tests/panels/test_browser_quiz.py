"""A panel participant who fails the character quiz, on a phone in a real browser: from the
Prolific link through consent, the characters and the quiz to the screen-out page, whose
link takes the screen-out code back to Prolific."""

import re

import pytest

from annotation import services as annotation_services
from annotation.models import Qualification
from panels.models import Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
TAP = 44


def assert_fits_a_phone(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_participant_who_fails_the_quiz_takes_the_screen_out_code_back_on_a_phone(
    live_server, new_page, demo_dataset, luffy, settings
):
    settings.LANGUAGE_CODE = "en"
    panel = make_panel_study(make_study(characters=[luffy]), items_per_participant=2, quiz=True)
    page = new_page(viewport=PHONE)

    page.goto(f"{live_server.url}/join/{panel.study.slug}/?PROLIFIC_PID={PROLIFIC_PID}")
    page.wait_for_url(re.compile(r"/start/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_selector("input[name=characters]")
    page.check(f"input[name=characters][value='{luffy.pk}']")
    page.click("main button[type=submit]")

    quiz = page.get_by_test_id("panel-quiz")
    quiz.wait_for()
    assert_fits_a_phone(page)
    qualification = Qualification.objects.get(character=luffy)
    questions = annotation_services.quiz_questions(qualification=qualification)
    for question in questions:
        wrong = (question.correct_choice + 1) % len(question.choices)
        label = quiz.locator(f"label:has(input[name=q{question.pk}][value='{wrong}'])")
        box = label.bounding_box()
        assert box is not None and box["height"] >= TAP, "a choice is a phone's tap target"
        label.click()
    assert quiz.locator("button[type=submit]").bounding_box()["height"] >= TAP
    quiz.locator("button[type=submit]").click()

    page.wait_for_url(re.compile(rf"/join/{panel.study.slug}/done/$"))
    assert "did not pass the quiz" in page.get_by_test_id("panel-screened-out").inner_text()
    assert "SCREENED" in page.get_by_test_id("panel-code").inner_text()
    link = page.get_by_test_id("panel-complete")
    assert link.get_attribute("href") == (
        "https://app.prolific.com/submissions/complete?cc=SCREENED"
    )
    assert link.bounding_box()["height"] >= TAP
    assert_fits_a_phone(page)
    participant = Participant.objects.get()
    assert (participant.state, participant.code) == (ParticipantState.SCREENED_OUT, "SCREENED")
