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


def test_a_rating_refused_because_the_study_is_paused_keeps_its_draft_for_the_reopening(
    live_server, new_page, rater
):
    """Staff pause the study while an item is being rated: the item may come back, so its
    draft stays; when the study reopens the same item brings every rating back. A refusal
    whose item cannot come back (its time ran out: it went to someone else) drops it."""
    from django.utils import timezone

    from annotation import services
    from annotation.models import Assignment, StudyStatus

    lease = lease_pair(rater)
    study = lease.item.study
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    form = ready_form(page)
    rate_with_digits(page)
    form.locator("textarea[name=comment]").fill("暂停前写的")
    all_rated = rated(page)

    services.study_set_status(study=study, status=StudyStatus.PAUSED)
    page.locator("#submit-rating").click()
    page.get_by_test_id("error").wait_for()
    assert "This study is paused" in page.get_by_test_id("error").inner_text()
    assert page.get_by_test_id("paused").is_visible()
    assert draft_of(page, lease.token) is not None
    assert not Judgment.objects.exists()

    services.study_set_status(study=study, status=StudyStatus.OPEN)
    page.goto(f"{live_server.url}/annotate/")
    page.wait_for_url(f"**/annotate/{lease.token}/")
    form = ready_form(page)
    assert rated(page) == all_rated
    assert form.locator("textarea[name=comment]").input_value() == "暂停前写的"

    # The same draft refused because the item's time ran out: it will not come back.
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now())
    page.locator("#submit-rating").click()
    page.get_by_test_id("error").wait_for()
    assert "ran out" in page.get_by_test_id("error").inner_text()
    assert draft_of(page, lease.token) is None
    assert not Judgment.objects.exists()
