"""The rating form's comment has a limit, and the annotator sees it: a count near the
limit, and a longer comment refused with the form as they sent it, never cut."""

import pytest

from annotation.models import Judgment
from tests.annotation.test_browser_rating_page import (
    PHONE,
    open_as,
    problems,
    rate_with_digits,
    ready_form,
)
from tests.builders import lease_pair
from tests.helpers import complete_form

LIMIT = 2000  # services.COMMENT_MAX_CHARS
TOO_LONG = (
    "Your comment may have at most 2000 characters; it has 2001."
    " Nothing was saved: shorten it and send again."
)


@pytest.mark.django_db
def test_a_comment_over_the_limit_is_refused_and_the_form_comes_back_as_sent(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)
    comment = "路飞" * 1000 + "!"

    response = client.post(
        f"/annotate/{lease.token}/",
        {**complete_form(value="3"), "comment": comment},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 422
    page = response.content.decode()
    assert TOO_LONG in page
    assert f">{comment}</textarea>" in page
    assert 'value="3" data-key="3" required checked' in page
    assert not Judgment.objects.exists()


@pytest.mark.django_db
def test_a_comment_at_the_limit_is_kept_whole_its_line_breaks_counted_once(client, alice):
    """A browser sends each line break as CR LF: the page counts one character, and so
    does the server."""
    lease = lease_pair(alice)
    client.force_login(alice)
    comment = ("a" * 99 + "\r\n") * 20

    response = client.post(f"/annotate/{lease.token}/", {**complete_form(), "comment": comment})

    assert response.status_code == 302
    stored = Judgment.objects.get(assignment=lease).comment
    assert stored == comment.replace("\r\n", "\n").strip()
    assert len(stored) == LIMIT - 1


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_page_counts_the_comment_near_its_limit_and_says_when_it_is_too_long(
    live_server, new_page, rater
):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    form = ready_form(page)
    comment = form.locator("textarea[name=comment]")
    count = page.get_by_test_id("comment-count")
    comment.fill("short")
    assert not count.is_visible()

    # Emoji are one character each, as people and the server count them (two UTF-16
    # units, which is what a browser's maxlength counts).
    comment.fill("😀" * 1850)
    assert count.inner_text() == "1,850 / 2,000 characters"

    # A paste longer than the limit goes in whole, and the page says by how much.
    comment.fill("")
    comment.focus()
    page.keyboard.insert_text("好" * 2345)
    assert len(comment.input_value()) == 2345
    assert count.inner_text() == (
        "2,345 / 2,000 characters: 345 too many. Shorten the comment to send it."
    )
    assert "over" in count.get_attribute("class")

    # Sent anyway, it comes back refused with everything still in place.
    page.evaluate("document.activeElement.blur()")  # digits rate outside the comment
    rate_with_digits(page)
    page.locator("#submit-rating").click()
    page.get_by_test_id("error").wait_for()
    assert "it has 2345. Nothing was saved" in page.get_by_test_id("error").inner_text()
    assert len(ready_form(page).locator("textarea[name=comment]").input_value()) == 2345
    assert page.get_by_test_id("comment-count").is_visible()
    assert not Judgment.objects.exists()
    # The browser logs the refusal's status itself; nothing else went wrong.
    assert [p for p in problems(page) if "status of 422" not in p] == []
