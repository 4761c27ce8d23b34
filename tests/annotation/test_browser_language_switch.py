"""Changing the language in the middle of rating: after htmx has swapped in later items,
the switch comes back to the item on screen, with its draft, and not by way of an item
already submitted ("You already submitted that item")."""

import pytest

from tests.annotation.test_browser_rating_page import (
    open_as,
    problems,
    rate_with_digits,
    ready_form,
    wait_for_other_item,
)
from tests.builders import lease_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_language_switch_returns_to_the_item_on_screen(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    ready_form(page)
    rate_with_digits(page)
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    current = page.locator("form.rating-form").get_attribute("data-draft-key")
    page.locator("form.rating-form textarea[name=comment]").fill("换成中文再看一遍")

    page.locator("form.lang button[value='zh-hans']").click()
    page.wait_for_load_state()
    ready_form(page)

    assert page.evaluate("document.documentElement.lang") == "zh-hans"
    assert f"/annotate/{current}/" in page.url
    body = page.locator("body").inner_text()
    assert "你已经提交过那个条目" not in body and "already submitted" not in body
    assert page.locator("textarea[name=comment]").input_value() == "换成中文再看一遍"
    assert problems(page) == []
