"""The rating draft in a real browser: a submission that never reached the server (a
phone losing its connection) or that the server failed on keeps every rating over a
reload and says so; one the server answered drops the draft."""

import pytest

from annotation.models import Judgment
from tests.annotation.test_browser_rating_page import (
    PHONE,
    open_as,
    rate_with_digits,
    ready_form,
    wait_for_other_item,
)
from tests.builders import lease_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOT_SENT = (
    "Not sent: the connection or the site failed. Your ratings are still here and kept in"
    " this browser; send them again."
)


def rated(page):
    return page.evaluate(
        "() => document.querySelectorAll('form.rating-form input[type=radio]:checked').length"
    )


def draft_of(page, token):
    return page.evaluate("token => localStorage.getItem('chatanime-draft:' + token)", token)


@pytest.mark.parametrize("failure", ["connection lost", "server error"])
def test_a_submission_that_failed_keeps_every_rating_over_a_reload(
    live_server, new_page, rater, failure
):
    lease = lease_pair(rater)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    form = ready_form(page)
    rate_with_digits(page)
    form.locator("textarea[name=comment]").fill("地铁里信号不好")
    all_rated = rated(page)

    def fail(route):
        if route.request.method != "POST":
            route.continue_()
        elif failure == "connection lost":
            route.abort("internetdisconnected")
        else:
            route.fulfill(status=500, body="Server Error")

    page.route(f"**/annotate/{lease.token}/", fail)
    page.locator("#submit-rating").click()
    note = page.get_by_test_id("send-failed")
    note.wait_for(state="visible")
    assert note.inner_text() == NOT_SENT
    assert not Judgment.objects.exists()

    page.unroute(f"**/annotate/{lease.token}/")
    page.reload()
    form = ready_form(page)
    assert rated(page) == all_rated
    assert form.locator("textarea[name=comment]").input_value() == "地铁里信号不好"
    assert page.get_by_test_id("send-failed").inner_text() == ""

    page.locator("#submit-rating").click()
    wait_for_other_item(page, lease.token)
    assert Judgment.objects.get(assignment=lease).comment == "地铁里信号不好"
    assert draft_of(page, lease.token) is None
