"""The judges' figures on a researcher's phone: the judge's figure beside each label,
not behind a sideways scroll."""

import pytest

from tests.builders import UserFactory, make_study
from tests.fixtures.browser import session_cookie

from .conftest import judge
from .fans import fans_rate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_on_a_phone_each_judge_figure_is_on_screen_beside_its_label(
    demo_dataset, researcher, judge_key, judge_server, live_server, new_page, settings
):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--both-orders", "--rate", "100000", "--items", "12")
    page = new_page(viewport={"width": 390, "height": 844})
    page.context.add_cookies([session_cookie(live_server, researcher)])
    page.goto(f"{live_server.url}/results/{study.slug}/#judges")

    table = page.locator("#judges table").first
    cells = table.locator("tbody td:nth-child(2)")
    assert cells.count() >= 6
    for index in range(cells.count()):
        box = cells.nth(index).bounding_box()
        # Within the screen, not in a column reached by scrolling the table sideways.
        assert box is not None and box["x"] + box["width"] <= 390, cells.nth(index).inner_text()
    assert table.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")


def test_on_a_phone_the_staff_list_of_judge_runs_shows_each_runs_progress(
    demo_dataset, judge_key, judge_server, live_server, new_page
):
    study = make_study(rounds=(1,))
    judge(judge_server, study, "--rate", "100000", "--items", "2")
    admin = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)
    page = new_page(viewport={"width": 390, "height": 844})
    page.context.add_cookies([session_cookie(live_server, admin)])
    page.goto(f"{live_server.url}/staff/judges/")

    # The status, the verdicts and the link to the figures are on screen, not behind a
    # sideways scroll past the study's name and a judge label one word a line.
    for cell in ("td:nth-child(3)", "td:nth-child(4)", "td:last-child a"):
        box = page.locator(f"[data-testid=judge-runs] tbody tr {cell}").first.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390, cell
