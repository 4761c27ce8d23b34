"""The results page's dimension chart on a phone, for a study of the published size of
sources (ten): every source named, every bar tall enough to read."""

import io

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.simulation import simulate_study
from dialogues.models import Character
from tests.builders import make_study, researcher_named
from tests.fixtures.browser import session_cookie
from tests.fixtures.data import DEMO_DATA

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MORE_MODELS = ["gpt-4.1", "claude-sonnet-4", "gemini-2.5-flash-preview", "deepseek-v3", "glm-4-plus", "doubao-1.5-pro"]  # fmt: skip


@pytest.fixture
def ten_sources(demo_dataset, tmp_path, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    for slug in MORE_MODELS:
        (tmp_path / f"{slug}.json").write_bytes((DEMO_DATA / "kumo-7b.json").read_bytes())
    call_command("import_chatanime", str(tmp_path), stdout=io.StringIO())
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    study = make_study(characters=[luffy], rounds=(1,), overlap=2)
    simulate_study(study=study, annotators=4, seed=1)
    Study.objects.filter(pk=study.pk).update(status="closed")
    call_command("aggregate", "--study", study.slug, stdout=io.StringIO())
    return study


def on_a_phone(new_page, live_server, study, canvas: str):
    """The study's results page at 390 px, a researcher's, once `canvas` has its chart."""
    page = new_page(viewport={"width": 390, "height": 844})
    page.context.add_cookies([session_cookie(live_server, researcher_named("r@example.com"))])
    page.goto(f"{live_server.url}/results/{study.slug}/")
    page.wait_for_function(
        f"() => window.Chart && Chart.getChart(document.getElementById('{canvas}'))"
    )
    return page


BARS = """() => {
  const chart = Chart.getChart(document.getElementById("bars"));
  const sources = chart.options.indexAxis === "y" ? chart.scales.y : chart.scales.x;
  return {named: sources.ticks.map((tick) => sources.getLabelForValue(tick.value)),
          labels: chart.data.labels,
          across: chart.options.indexAxis === "y" ? chart.chartArea.height : chart.chartArea.width,
          along: chart.options.indexAxis === "y" ? chart.chartArea.width : chart.chartArea.height};
}"""


def test_on_a_phone_the_dimension_chart_names_every_source_with_room_for_its_bars(
    live_server, new_page, ten_sources
):
    page = on_a_phone(new_page, live_server, ten_sources, "bars")

    bars = page.evaluate(BARS)

    assert len(bars["labels"]) == 10
    assert bars["named"] == bars["labels"]  # none skipped to make room
    # Three dimension bars per source, each at least 8 px thick with room between groups.
    assert bars["across"] >= 10 * (3 * 8 + 8)
    # And the 1-5 scale they are drawn on is long enough to tell 3.2 from 3.5.
    assert bars["along"] >= 150


RADAR = """() => {
  const chart = Chart.getChart(document.getElementById("radar"));
  const r = chart.scales.r;
  return {labels: chart.data.labels, radius: r.drawingArea, width: chart.width};
}"""


def test_on_a_phone_the_radar_puts_long_metric_names_on_two_lines_and_leaves_the_web_room(
    live_server, new_page, ten_sources
):
    page = on_a_phone(new_page, live_server, ten_sources, "radar")

    radar = page.evaluate(RADAR)

    assert ["Character", "knowledge"] in radar["labels"] and "Fluency" in radar["labels"]
    # With the names on one line and a square canvas under a legend of ten sources, the
    # web was 0.41 of the width.
    assert radar["radius"] * 2 >= 0.55 * radar["width"]
