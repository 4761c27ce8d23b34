"""The research export: exact columns, every rating once, unblinded, injection-safe."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.exports import LONG_COLUMNS, neutralise
from annotation.models import Judgment, Rating
from annotation.simulation import simulate_study
from tests.fixtures.studies import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def filled(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(
        overlap=1, rounds=(1,), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    simulate_study(study=study, annotators=4, seed=1)
    return study


def export(*args) -> str:
    out = io.StringIO()
    call_command("export_ratings", *args, stdout=out)
    return out.getvalue()


def test_the_long_csv_has_the_documented_columns_and_one_row_per_rating(filled):
    rows = list(csv.DictReader(io.StringIO(export("--study", filled.slug))))

    assert list(rows[0])[: len(LONG_COLUMNS)] == LONG_COLUMNS
    assert LONG_COLUMNS[:15] == [
        "study",
        "item",
        "judgment",
        "annotator",
        "character",
        "scenario",
        "round",
        "source",
        "source_kind",
        "position",
        "metric",
        "value",
        "preference",
        "seconds_on_task",
        "submitted_at",
    ]
    assert len(rows) == Rating.objects.filter(judgment__item__study=filled).count()
    pair_rows = [r for r in rows if r["position"] in ("left", "right")]
    assert {r["position"] for r in pair_rows} == {"left", "right"}
    assert {r["source_kind"] for r in pair_rows} == {"human", "llm"}
    assert all(r["submitted_at"].endswith("Z") for r in rows)
    assert all("@" not in r["annotator"] for r in rows)
    assert {r["metric"] for r in rows} >= {"fluency", "emotional_value", "diversity"}


def test_positions_and_preferences_name_the_real_sources(filled):
    rows = list(csv.DictReader(io.StringIO(export("--study", filled.slug))))
    judgment = Judgment.objects.filter(item__study=filled, item__kind="pair", is_tie=False).first()
    mine = [r for r in rows if r["judgment"] == str(judgment.pk)]

    left = {r["source"] for r in mine if r["position"] == "left"}
    assert left == {judgment.assignment.left_source.slug}
    assert {r["preference"] for r in mine} == {judgment.preferred_answer.source.slug}


def test_excluded_judgments_are_left_out_unless_asked_for(filled):
    judgment = Judgment.objects.filter(item__study=filled).first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")

    default = list(csv.DictReader(io.StringIO(export("--study", filled.slug))))
    everything = list(
        csv.DictReader(io.StringIO(export("--study", filled.slug, "--include-excluded")))
    )

    assert str(judgment.pk) not in {r["judgment"] for r in default}
    assert {r["excluded"] for r in everything if r["judgment"] == str(judgment.pk)} == {"True"}
    assert len(everything) == len(default) + judgment.ratings.count()


def test_jsonl_and_wide_formats(filled):
    lines = export("--study", filled.slug, "--format", "jsonl").splitlines()
    wide = list(csv.DictReader(io.StringIO(export("--study", filled.slug, "--format", "wide"))))

    assert len(lines) == Rating.objects.filter(judgment__item__study=filled).count()
    assert json.loads(lines[0])["study"] == filled.slug
    assert len(wide) == Judgment.objects.filter(item__study=filled).count()
    pair = next(r for r in wide if r["left_source"])
    assert pair["left_fluency"] and pair["right_emotional_value"]


def test_formula_like_text_is_neutralised(filled):
    judgment = Judgment.objects.filter(item__study=filled).first()
    Judgment.objects.filter(pk=judgment.pk).update(comment='=HYPERLINK("http://evil")')

    rows = list(csv.DictReader(io.StringIO(export("--study", filled.slug))))

    comments = {r["comment"] for r in rows if r["judgment"] == str(judgment.pk)}
    assert comments == {'\'=HYPERLINK("http://evil")'}
    assert neutralise("+1") == "'+1" and neutralise("@x") == "'@x" and neutralise(3) == 3


def test_a_file_with_a_bom_for_excel(filled, tmp_path):
    target = tmp_path / "ratings.csv"

    call_command(
        "export_ratings", "--study", filled.slug, "-o", str(target), "--bom", stderr=io.StringIO()
    )

    assert target.read_bytes().startswith(b"\xef\xbb\xbfstudy,item,")


def test_an_unknown_study_is_an_error(filled):
    with pytest.raises(CommandError, match="no study"):
        export("--study", "missing")
