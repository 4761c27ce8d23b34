"""What a researcher publishes: intervals only where there is information, the methods
paragraph, and exports that say what the results counted."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count

from annotation import services
from annotation.exports import file_manifest_path
from annotation.methods import METHODS_VERSION
from annotation.models import AnnotatorProfile, Judgment, Rating, StudyResults
from annotation.models.common import FORMULA_STARTS, new_pseudonym
from annotation.selectors import results_view
from annotation.simulation import simulate_study
from tests.builders import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_study(demo_dataset, luffy, settings):
    """Four annotators, overlap two: fewer annotators per compared source than the
    default minimum of five whichever items each of them is served, so every source's
    figures are thin."""
    settings.CHATANIME_BOOTSTRAP_DRAWS = 200
    study = make_study(
        overlap=2, rounds=(1,), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    simulate_study(study=study, annotators=4, seed=3)
    return study


def payload_of(study) -> dict:
    out = io.StringIO()
    call_command("aggregate", "--study", study.slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_results_state_their_draws_seed_and_minimum(small_study, settings):
    payload = payload_of(small_study)

    assert payload["statistics"]["bootstrap_draws"] == 200
    assert payload["statistics"]["seed"] == settings.CHATANIME_BOOTSTRAP_SEED
    assert payload["statistics"]["min_annotators"] == 5
    assert payload["statistics"]["min_judgments"] == 10


def test_the_default_is_two_thousand_draws():
    from django.conf import settings

    assert settings.CHATANIME_BOOTSTRAP_DRAWS >= 2000


def test_thin_estimates_say_not_enough_data_instead_of_an_interval(small_study):
    payload = payload_of(small_study)

    thin = [
        row
        for board in payload["leaderboard"].values()
        for row in board.values()
        if row["annotators"] < 5 or row["n"] < 10
    ]
    assert thin
    for row in thin:
        assert row["enough_data"] is False
        assert row["ci_low"] is None and row["ci_high"] is None and row["mean"] is not None
    for board in payload["paired_differences"].values():
        for row in board.values():
            assert (row["ci_low"] is None) == (not row["enough_data"])


def test_the_page_shows_not_enough_data_and_the_statistics(client, small_study, researcher):
    payload_of(small_study)
    client.force_login(researcher)

    page = client.get(f"/results/{small_study.slug}/", HTTP_ACCEPT_LANGUAGE="en")

    text = page.content.decode()
    assert "not enough data" in text
    assert "200 resampling draws (seed" in text
    assert "cluster-robust (items and annotators) for means, agreement and Bradley–Terry" in text
    assert "No interval below 10 judgments or 5 annotators" in text
    assert f"/results/{small_study.slug}/methods/" in text
    # Every pair is with the reference: the strengths would restate the win rates.
    assert 'data-testid="strengths-restate"' in text
    assert "would restate the win rates" in text


def test_the_page_says_what_the_agreement_preference_and_annotator_columns_count(
    client, small_study, researcher
):
    # "±1", "Units", "Wins" and "Distance from others" were column heads with no word on
    # what they count or in what unit.
    payload_of(small_study)
    client.force_login(researcher)

    text = client.get(f"/results/{small_study.slug}/").content.decode()

    assert "±1: the share of pairs of ratings of the same answer that differ by at most" in text
    assert "at least two annotators rated (units;" in text
    assert "the win rate is wins out of all three" in text
    assert "the mean distance, in points of the 1–5 scale," in text


def test_thin_agreement_and_style_adjusted_figures_show_no_number(client, small_study, researcher):
    """Agreement from a handful of units (0.000 from one, an ICC of -7) and a length
    adjustment fitted to a few judgments (19.50 on a 1-5 scale) would be read as findings:
    where there is not enough data the page says so and shows no number."""
    import re

    payload = payload_of(small_study)
    thin = [slug for slug, row in payload["agreement"].items() if row["enough_data"] is False]
    assert thin
    client.force_login(researcher)
    text = client.get(f"/results/{small_study.slug}/").content.decode()

    agreement = text.split('data-testid="agreement"', 1)[1].split("</table>", 1)[0]
    rows = [row for row in agreement.split("<tr>") if "not-enough" in row]
    assert len(rows) == len(thin)
    for row in rows:
        assert not re.search(r"\d\.\d{3}", row), row
    style = text.split('data-testid="style-adjusted"', 1)[1].split("</table>", 1)[0]
    cells = [cell for cell in style.split("<td>") if "not-enough" in cell]
    assert cells
    for cell in cells:
        assert not re.search(r"\d\.\d{2}", cell), cell


def test_a_study_rated_by_one_annotator_has_no_intervals(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 50
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    simulate_study(study=study, annotators=1, seed=2)

    payload = payload_of(study)

    rows = [row for board in payload["leaderboard"].values() for row in board.values()]
    assert rows and all(r["annotators"] == 1 and r["ci_low"] is None for r in rows)
    assert all(not a["enough_data"] and a["ci_low"] is None for a in payload["agreement"].values())
    assert payload["position_bias"]["overall"]["ci_low"] is None
    # The bar chart names no whiskers it cannot draw.
    assert results_view(study).chart["ciLabel"] == "Not enough data for confidence intervals"


def test_an_empty_study_has_empty_results(demo_dataset, luffy):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])

    results = services.study_recompute(study=study)

    payload = results.payload
    assert payload["judgments"] == 0
    for family in ("leaderboard", "paired_differences", "diversity", "preferences"):
        assert payload[family] == {}
    assert payload["bradley_terry"] == {} and payload["annotators"] == {}


def test_per_annotator_figures_count_what_the_results_count(small_study):
    judgment = Judgment.objects.filter(item__study=small_study).order_by("pk").first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")
    pseudonym = AnnotatorProfile.objects.get(user=judgment.annotator).pseudonym

    payload = payload_of(small_study)

    figures = payload["annotators"][pseudonym]
    counted = Judgment.objects.filter(item__study=small_study, annotator=judgment.annotator)
    assert figures["judgments"] == counted.counted().count() == counted.count() - 1
    assert figures["excluded"] == 1
    assert sum(a["judgments"] for a in payload["annotators"].values()) == payload["judgments"]


def test_the_methods_paragraph_states_the_shown_numbers(client, small_study, researcher):
    judgment = Judgment.objects.filter(item__study=small_study).first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")
    payload = payload_of(small_study)
    client.force_login(researcher)

    page = client.get(f"/results/{small_study.slug}/methods/").content.decode()

    statistics = payload["statistics"]
    assert f"The analysis uses {payload['judgments']} judgment(s)" in page
    assert "1 judgment(s) were excluded by study staff" in page
    assert (
        f"{statistics['bootstrap_draws']} bootstrap resamples of cells (seed {statistics['seed']})"
        in page
    )
    assert "分析使用 " in page and f"{payload['judgments']} 条评判" in page
    assert METHODS_VERSION in page
    # Small study, reference design: strengths would restate the win rates; the
    # intervals' degrees of freedom and the multiplicity are stated.
    assert "Bradley-Terry strengths are not reported: every source was compared" in page
    assert "effective number of cells or of annotators" in page
    assert "Korn and Graubard 1998" in page
    assert "needs intervals at 99.4% per metric (Bonferroni)" in page
    assert "多重比较" in page
    # What each interval resamples or clusters is said where the paragraph is pasted from.
    assert "delete-one-cluster jackknife variance (leaving out one cell, one annotator" in page
    assert "Bradley-Terry a cluster-robust sandwich variance" in page
    assert "逐一删除聚类" in page and "三明治方差" in page


def test_aggregate_prints_the_methods_paragraph(small_study):
    out = io.StringIO()

    call_command("aggregate", "--study", small_study.slug, "--methods", stdout=out)
    results = StudyResults.objects.get(study=small_study)

    assert f"The analysis uses {results.judgments} judgment(s)" in out.getvalue()
    zh = io.StringIO()
    call_command(
        "aggregate", "--study", small_study.slug, "--methods", "--language", "zh", stdout=zh
    )
    assert "区间：" in zh.getvalue()
    with pytest.raises(CommandError, match="invalid choice"):
        call_command(
            "aggregate",
            "--study",
            small_study.slug,
            "--methods",
            "--language",
            "fr",
            stdout=io.StringIO(),
        )


def test_the_methods_page_before_any_results(client, demo_dataset, researcher, luffy):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    client.force_login(researcher)

    page = client.get(f"/results/{study.slug}/methods/")

    assert page.status_code == 200
    assert b'data-testid="no-results"' in page.content


# Exports --------------------------------------------------------------------------------


def test_a_single_file_export_writes_its_manifest_beside_it(small_study, tmp_path):
    target = tmp_path / "ratings.csv"

    call_command(
        "export_ratings", "--study", small_study.slug, "-o", str(target), stderr=io.StringIO()
    )

    manifest = json.loads(file_manifest_path(target).read_text(encoding="utf-8"))
    import hashlib

    described = manifest["files"]["ratings.csv"]
    assert described["sha256"] == hashlib.sha256(target.read_bytes()).hexdigest()
    assert described["rows"] == Rating.objects.filter(judgment__item__study=small_study).count()
    counted = Judgment.objects.filter(item__study=small_study).counted().count()
    assert manifest["judgments"]["counted"] == counted
    assert manifest["command"].startswith("export_ratings --format csv -o ")
    assert manifest["software"]["name"] == "chatanime"


def test_an_export_to_a_file_that_cannot_be_written_is_an_error(small_study, tmp_path):
    with pytest.raises(CommandError, match=r"cannot write .*ratings\.csv"):
        call_command(
            "export_ratings",
            "--study",
            small_study.slug,
            "-o",
            str(tmp_path / "missing" / "ratings.csv"),
            stderr=io.StringIO(),
        )
    assert not (tmp_path / "missing").exists()


def test_every_format_carries_what_the_results_count(small_study):
    judgment = Judgment.objects.filter(item__study=small_study, item__kind="pair").first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")

    def export(kind):
        out = io.StringIO()
        call_command(
            "export_ratings",
            "--study",
            small_study.slug,
            "--format",
            kind,
            "--include-excluded",
            stdout=out,
        )
        return out.getvalue()

    long_rows = list(csv.DictReader(io.StringIO(export("csv"))))
    wide_rows = list(csv.DictReader(io.StringIO(export("wide"))))
    jsonl = [json.loads(line) for line in export("jsonl").splitlines()]

    for rows in (long_rows, wide_rows):
        assert {
            "simulated",
            "excluded",
            "is_gold",
            "counted",
            "served_at",
            "gold_passed",
            "open_flags",
            "character_id",
            "scenario_id",
        } <= set(rows[0])
    assert {"answer"} <= set(long_rows[0]) and {"left_answer", "right_answer"} <= set(wide_rows[0])
    mine = [r for r in jsonl if r["judgment"] == judgment.pk]
    assert {(r["excluded"], r["counted"]) for r in mine} == {(True, False)}
    assert {r["answer"] for r in mine if r["position"] != "set"} == set(
        judgment.ratings.values_list("answer_id", flat=True)
    )
    counted = {r["judgment"] for r in jsonl if r["counted"]}
    assert len(counted) == Judgment.objects.filter(item__study=small_study).counted().count()
    assert all(r["served_at"].endswith("Z") and r["served_at"] <= r["submitted_at"] for r in jsonl)
    # One spelling of each pseudonym in every format.
    assert {r["annotator"] for r in long_rows} == {r["annotator"] for r in jsonl}


def test_pseudonyms_never_start_like_a_formula():
    assert not any(new_pseudonym().startswith(FORMULA_STARTS) for _ in range(5000))


def test_the_simulator_can_give_a_few_annotators_most_of_the_work(demo_dataset, luffy, settings):
    """Real crowds are skewed; the simulator's default (everyone takes turns) is not."""
    settings.CHATANIME_BOOTSTRAP_DRAWS = 0
    study = make_study(overlap=2, rounds=(1,), characters=[luffy])

    made, _truth = simulate_study(study=study, annotators=10, seed=4, workload_sd=2.0)

    workloads = [
        row["n"]
        for row in Judgment.objects.filter(item__study=study)
        .values("annotator")
        .annotate(n=Count("pk"))
    ]
    effective = sum(workloads) ** 2 / sum(w * w for w in workloads)
    assert sum(workloads) == made
    assert max(workloads) >= 3 * min(workloads)
    # Even workloads leave about 10 effective annotators.
    assert effective < 8
