"""An admin in a real browser (Debian's Chromium via Playwright) starts a collection run
against the local OpenAI-compatible server, sees an answer flagged, edits and accepts it."""

import pytest

from collection.models import AnswerEdit, GeneratedAnswer, ModelEndpoint, ReviewStatus
from dialogues.models import Answer
from tests.builders import UserFactory
from tests.fixtures.browser import log_in
from tests.helpers import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_starts_a_run_and_accepts_a_flagged_answer_with_an_edit(
    live_server, new_page, demo_dataset, chat_server, monkeypatch, settings
):
    settings.LANGUAGE_CODE = "en"
    settings.COLLECTION_RETRY_BASE_SECONDS = 0.01
    monkeypatch.setenv("BROWSER_TEST_KEY", "sk-browser")
    ModelEndpoint.objects.create(
        name="New model",
        source_slug="new-model",
        base_url=chat_server.url,
        model="new-model-1",
        api_key_env="BROWSER_TEST_KEY",
    )
    UserFactory(email="admin@example.com", password=PASSWORD, is_staff=True)
    chat_server.script("english")
    page = new_page()
    log_in(page, live_server.url, "admin@example.com")

    page.goto(f"{live_server.url}/staff/collection/")
    page.get_by_label("Scenarios (e.g. 1-60 or 1,5,9-12)").fill("1")
    page.get_by_label("Rounds (1, 2 or 1,2)").fill("1")
    page.get_by_role("button", name="Start").click()

    page.get_by_test_id("run-status").filter(has_text="Finished").wait_for()
    flagged = GeneratedAnswer.objects.get(review_status=ReviewStatus.FLAGGED)
    card = page.get_by_test_id(f"flagged-answer-{flagged.pk}")
    assert "not written in Chinese" in card.inner_text()
    card.locator("textarea").fill("别担心，有我在！")
    card.get_by_role("button", name="Accept with my edit").click()

    page.get_by_test_id("no-flagged").wait_for()
    assert Answer.objects.get(source__slug="new-model", text="别担心，有我在！")
    assert AnswerEdit.objects.filter(action="edit").count() == 1
