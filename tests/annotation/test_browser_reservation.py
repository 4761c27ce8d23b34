"""The item's reservation in a real browser: counted down on the page, offered to be kept
near its end (the line staying in sight at the foot of a phone's screen), and said to have
run out before ratings are sent that would be refused."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment
from tests.annotation.test_browser_rating_page import PHONE, open_as, ready_form
from tests.builders import lease_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def reserved(lease, *, served_ago: int, left: int):
    now = timezone.now()
    Assignment.objects.filter(pk=lease.pk).update(
        served_at=now - timedelta(minutes=served_ago), expires_at=now + timedelta(seconds=left)
    )
    return lease


def test_near_its_end_the_item_can_be_kept_from_the_foot_of_the_screen(
    live_server, new_page, rater
):
    lease = reserved(lease_pair(rater), served_ago=26, left=4 * 60)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/", viewport=PHONE)
    ready_form(page)
    line = page.get_by_test_id("reservation")
    assert line.locator(".reservation-text").inner_text() == (
        "Only 4 minutes left on this item: send your ratings, or keep it longer."
    )
    # Below the form in the page, yet in sight at the foot of the screen from the start.
    box = line.bounding_box()
    assert box["y"] + box["height"] <= PHONE["height"] + 1

    page.get_by_test_id("keep").click()

    page.locator(".reservation-text", has_text="Reserved for you for 30 more minutes.").wait_for()
    assert not page.get_by_test_id("keep").is_visible()
    lease.refresh_from_db()
    assert (lease.expires_at - timezone.now()).total_seconds() > 29 * 60
    assert page.errors == []


def test_the_page_says_when_the_time_has_run_out(live_server, new_page, rater):
    lease = reserved(lease_pair(rater), served_ago=29, left=6)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    ready_form(page)
    assert page.get_by_test_id("keep").is_visible()

    over = (
        "Your time for this item ran out: it went back to the pool, and ratings sent now"
        " are refused."
    )
    page.locator(".reservation-text", has_text=over).wait_for(timeout=20_000)
    assert page.get_by_test_id("reservation-said").inner_text() == over  # read out once
    assert not page.get_by_test_id("keep").is_visible()
    assert page.errors == []


def test_a_screen_reader_hears_the_warning_once_and_not_each_minute(live_server, new_page, rater):
    lease = reserved(lease_pair(rater), served_ago=24, left=5 * 60 + 4)
    page = open_as(new_page, live_server, rater, f"/annotate/{lease.token}/")
    ready_form(page)
    line = page.get_by_test_id("reservation")
    assert line.get_attribute("aria-live") == "off"  # #work's live region stays quiet on it
    assert page.get_by_test_id("reservation-said").inner_text() == ""

    said = page.get_by_test_id("reservation-said")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=reservation-said]').textContent !== ''",
        timeout=20_000,
    )
    assert said.inner_text() == (
        "Only 5 minutes left on this item: send your ratings, or keep it longer."
    )
    assert page.errors == []
