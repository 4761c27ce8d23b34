"""Paging through the staff lists keeps the filters that were chosen."""

import html
import re

import pytest

from annotation.views.staff import common as staff_common
from tests.builders import applicant_who_passed, approved_annotator

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages_of_two(monkeypatch):
    monkeypatch.setattr(staff_common, "PAGE_SIZE", 2)


def pager_links(response) -> list[str]:
    pager = re.search(r'<p class="pager">(.*?)</p>', response.content.decode(), re.S)
    assert pager, "the page shows no pager"
    return [html.unescape(href) for href in re.findall(r'href="([^"]*)"', pager.group(1))]


def test_the_directory_pages_keep_the_status_and_search(client, manager, luffy, pages_of_two):
    for n in range(5):
        approved_annotator(f"fan{n}@example.com", [luffy])
    approved_annotator("someone-else@example.com", [luffy])
    client.force_login(manager)

    first = client.get("/staff/annotators/", {"status": "approved", "q": "fan"})
    second = client.get("/staff/annotators/", {"status": "approved", "q": "fan", "page": 2})

    assert pager_links(first) == ["?status=approved&q=fan&page=2"]
    assert pager_links(second) == [
        "?status=approved&q=fan&page=1",
        "?status=approved&q=fan&page=3",
    ]
    assert "fan2@example.com" in second.content.decode()
    assert "someone-else@example.com" not in second.content.decode()


def test_the_queue_redrawn_after_a_decision_pages_within_its_status(
    client, manager, luffy, question_bank, pages_of_two
):
    for n in range(4):
        applicant_who_passed(f"fan{n}@example.com", [luffy])
    client.force_login(manager)

    # The decision is posted without a query string; the redrawn queue still pages
    # through the applications of the status it shows.
    response = client.post(
        "/staff/screening/review/",
        {"decision": "approve", "qualification": [], "status": "passed"},
        headers={"HX-Request": "true"},
    )

    assert pager_links(response) == ["?status=passed&page=2"]
