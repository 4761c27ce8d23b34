"""Correcting a rating with the keyboard once every row is rated: the focus is on
Submit, ↑ goes back into the rows, and digits change the highlighted row there as they
did before it was complete; nothing is sent until Enter."""

import pytest

from annotation.models import Judgment
from tests.annotation.test_browser_rating_page import (
    DESKTOP,
    PHONE,
    open_as,
    problems,
    rate_with_digits,
    ready_form,
    wait_for_other_item,
)
from tests.builders import lease_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def active_row(page):
    return page.evaluate(
        "() => { const all = [...document.querySelectorAll('form.rating-form [data-group]')];"
        " return all.findIndex(g => g.classList.contains('active')); }"
    )


def checked(page, name):
    return page.evaluate(
        "name => { const c = document.querySelector("
        "`form.rating-form input[name='${name}']:checked`); return c && c.value; }",
        name,
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_arrow_up_from_submit_and_a_digit_correct_a_rated_row(
    live_server, new_page, rater, viewport
):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=viewport)
    form = ready_form(page)
    rows = form.locator("[data-group]").count()
    last = form.locator("[data-group]").nth(rows - 1)
    last_name = last.locator("input").first.get_attribute("name")
    page.focus("form.rating-form fieldset.scale input")
    rate_with_digits(page)  # every scale 4, the choice rows 1
    assert page.evaluate("document.activeElement.id") == "submit-rating"

    page.keyboard.press("ArrowUp")
    assert active_row(page) == rows - 1
    page.keyboard.press("3")  # "tie" / "not sure" in the last choice row
    assert checked(page, last_name) in ("tie", "unsure")

    # ... and further up, a scale: ↑ twice more lands on a scale row when there are two
    # choice rows, once when there is one; the digit changes that scale's value.
    choices = form.locator("fieldset.choice").count()
    for _ in range(choices):
        page.keyboard.press("ArrowUp")
    scale_index = rows - 1 - choices
    assert active_row(page) == scale_index
    scale_name = (
        form.locator("[data-group]").nth(scale_index).locator("input").first.get_attribute("name")
    )
    page.keyboard.press("2")
    assert checked(page, scale_name) == "2"
    assert not Judgment.objects.filter(assignment=lease).exists()

    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    judgment = Judgment.objects.get(assignment=lease)
    assert judgment.ratings.filter(value=2).count() == 1
    assert problems(page) == []


def test_enter_with_rows_left_says_so_in_words_and_moves_to_the_first(live_server, new_page, rater):
    """A red border alone reaches no screen reader: Enter with rows left fills a status
    line and puts the focus on the first row left, which a digit then rates."""
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    form = ready_form(page)
    note = page.get_by_test_id("missing-note")
    assert note.get_attribute("role") == "status" and note.inner_text() == ""
    page.focus("form.rating-form fieldset.scale input")
    page.keyboard.press("4")  # the first row only

    page.keyboard.press("Enter")

    assert note.inner_text() == ("Not every row is rated yet: the rows left are outlined in red.")
    second = form.locator("fieldset.scale").nth(1)
    assert second.evaluate("g => g.contains(document.activeElement)")
    assert not Judgment.objects.exists()
    rate_with_digits(page)
    assert note.inner_text() == ""
    page.keyboard.press("Enter")
    wait_for_other_item(page, lease.token)
    assert Judgment.objects.filter(assignment=lease).count() == 1
    assert problems(page) == []


def test_a_preference_left_unrated_is_outlined_in_red_like_the_scales(live_server, new_page, rater):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    form = ready_form(page)
    page.focus("form.rating-form fieldset.scale input")
    for _ in range(form.locator("fieldset.scale").count()):
        page.keyboard.press("4")  # every scale, not the preference

    page.keyboard.press("Enter")

    preference = form.locator("fieldset.choice").first
    assert preference.evaluate("g => g.contains(document.activeElement)")
    red = "rgb(207, 34, 46)"
    assert preference.evaluate("g => getComputedStyle(g).borderTopColor") == red
    assert (
        form.locator("fieldset.scale").first.evaluate("g => getComputedStyle(g).borderTopColor")
        != red
    )
    assert not Judgment.objects.exists()
