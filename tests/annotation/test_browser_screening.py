"""A fan qualifies for a character that had no quiz before the bundled bank, in a real
browser (Debian's Chromium via Playwright)."""

import io
import json
import re

import pytest
from django.core.management import call_command

from annotation import services
from annotation.models import Judgment, Qualification, ScreeningQuestion
from dialogues.models import Character
from tests.builders import UserFactory, make_study
from tests.fixtures.browser import (
    approve_passed_applications_in_the_admin,
    log_in,
    rate_current_item_with_the_keyboard,
)
from tests.fixtures.data import DEMO_DATA
from tests.helpers import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOJO = "《咒术回战》的五条悟"
UNKNOWN = "《原创故事》的小林"


@pytest.fixture
def gojo_study(tmp_path):
    """Answers for 五条悟 (and for a character of no published work) in every demo source,
    an open study over them, and the bundled quiz bank loaded."""
    for source in DEMO_DATA.glob("*.json"):
        dialogues = json.loads(source.read_text(encoding="utf-8"))
        some_dialogues = next(iter(dialogues.values()))
        (tmp_path / source.name).write_text(
            json.dumps({GOJO: some_dialogues, UNKNOWN: some_dialogues}, ensure_ascii=False),
            encoding="utf-8",
        )
    call_command("import_chatanime", str(tmp_path), stdout=io.StringIO())
    call_command("load_screening_questions", stdout=io.StringIO())
    gojo = Character.objects.get(key=GOJO)
    make_study(characters=[gojo], rounds=(1,))
    return gojo


def test_a_fan_of_a_formerly_quizless_character_qualifies_and_rates(
    live_server, new_page, gojo_study, settings
):
    settings.LANGUAGE_CODE = "en"
    gojo, base = gojo_study, live_server.url
    unknown = Character.objects.get(key=UNKNOWN)
    assert ScreeningQuestion.objects.filter(character=gojo).count() == 8
    UserFactory(email="fan@example.com", password=PASSWORD)
    page = new_page()
    log_in(page, base, "fan@example.com")

    page.goto(f"{base}/screening/")
    page.wait_for_url(re.compile(r"/screening/consent/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/characters/$"))

    # The character without a quiz cannot be ticked, and says why.
    assert page.locator(f"input[name=character][value='{unknown.pk}']").is_disabled()
    assert "cannot be chosen" in page.get_by_test_id(f"no-quiz-{unknown.pk}").inner_text()
    page.check(f"input[name=character][value='{gojo.pk}']")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))

    # First attempt: every answer wrong. The result names the pass mark and what is left.
    page.click(f"a[href='/screening/quiz/{gojo.pk}/']")
    assert "You pass with 80% of the answers right." in page.content()
    qualification = Qualification.objects.get(profile__user__email="fan@example.com")
    first = services.quiz_questions(qualification=qualification)
    for question in first:
        wrong = (question.correct_choice + 1) % len(question.choices)
        page.check(f"input[name=q{question.pk}][value='{wrong}']")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))
    message = page.locator(".messages").inner_text()
    assert "you scored 0%; the pass mark is 80%." in message
    assert "You have 1 attempt left" in message

    # Second attempt: other questions first, all answered right.
    page.click(f"a[href='/screening/quiz/{gojo.pk}/']")
    qualification.refresh_from_db()
    second = services.quiz_questions(qualification=qualification)
    assert {q.pk for q in second} != {q.pk for q in first}
    for question in second:
        page.check(f"input[name=q{question.pk}][value='{question.correct_choice}']")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))
    assert "Quiz passed: you scored 100%" in page.locator(".messages").inner_text()
    assert page.get_by_test_id("waiting").is_visible()

    # A study manager approves the application in the admin.
    approve_passed_applications_in_the_admin(new_page(), base)

    # The fan rates 五条悟's answers.
    page.goto(f"{base}/annotate/")
    page.wait_for_selector("form.rating-form")
    rate_current_item_with_the_keyboard(page)
    judgment = Judgment.objects.get(annotator__email="fan@example.com")
    assert judgment.item.character == gojo


def signed_in_on_a_phone(live_server, new_page, claimed=()):
    """A fan who consented (and claimed `claimed`), signed in at 390 px."""
    fan = UserFactory(email="phone-fan@example.com", password=PASSWORD)
    services.consent_give(user=fan)
    if claimed:
        services.characters_claim(user=fan, characters=list(claimed))
    page = new_page(viewport={"width": 390, "height": 844})
    log_in(page, live_server.url, "phone-fan@example.com")
    return page


def test_on_a_phone_every_quiz_choice_is_a_44_px_target(live_server, new_page, gojo_study):
    page = signed_in_on_a_phone(live_server, new_page, claimed=[gojo_study])

    page.goto(f"{live_server.url}/screening/quiz/{gojo_study.pk}/")

    choices = page.locator(".quiz-question label")
    assert choices.count() >= 10
    for index in range(choices.count()):
        box = choices.nth(index).bounding_box()
        assert box["height"] >= 44 and box["width"] >= 300, index


def test_on_a_phone_every_character_to_choose_is_a_44_px_target(live_server, new_page, gojo_study):
    page = signed_in_on_a_phone(live_server, new_page)

    page.goto(f"{live_server.url}/screening/characters/")

    choices = page.locator(".character-list label")
    assert choices.count() >= 2
    for index in range(choices.count()):
        assert choices.nth(index).bounding_box()["height"] >= 44, index
        # The name, work and English name run on as one text beside the box, not as
        # narrow columns that break a name after two characters.
        assert choices.nth(index).locator("> span > small").count() == 1, index
    box = page.locator(".character-list input[type=checkbox]").first.bounding_box()
    assert box["width"] >= 20 and box["height"] >= 20
