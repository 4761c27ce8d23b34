"""A study's published figures rebuilt from its export snapshot alone."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import GoldCheck, Item, Judgment, QualityFlag, Study
from annotation.reproduce import compare, reproduce
from annotation.simulation import simulate_study
from tests.builders import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold_study(demo_dataset, luffy, settings):
    """Simulated, with gold items answered by every annotator who met them, three
    excluded judgments, and quality flags on judgments."""
    settings.CHATANIME_BOOTSTRAP_DRAWS = 2000
    study = make_study(
        overlap=3, rounds=(1, 2), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    Study.objects.filter(pk=study.pk).update(pause_after_flags=0)
    study.refresh_from_db()
    simulate_study(study=study, annotators=9, seed=7)
    # Staff mark three judged pairs as gold afterwards; each judgment was checked.
    gold = list(Item.objects.filter(study=study, kind="pair", judgment_count__gt=0)[:3])
    Item.objects.filter(pk__in=[i.pk for i in gold]).update(is_gold=True)
    for index, judgment in enumerate(Judgment.objects.filter(item__in=gold)):
        GoldCheck.objects.create(judgment=judgment, passed=index % 2 == 0)
        if index % 2:
            QualityFlag.objects.create(
                annotator=judgment.annotator, study=study, judgment=judgment, kind="failed_check"
            )
    pairs = Judgment.objects.filter(item__study=study, item__kind="pair", item__is_gold=False)
    for judgment in pairs.order_by("pk")[:3]:
        services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")
    assert Judgment.objects.filter(item__study=study, item__is_gold=True).exists()
    call_command("aggregate", "--study", study.slug, stdout=io.StringIO())
    return study


def snapshot(study, target, *options):
    call_command(
        "export_ratings",
        "--snapshot",
        str(target),
        "--study",
        study.slug,
        *options,
        stderr=io.StringIO(),
    )
    return target


def test_every_figure_is_rebuilt_from_the_snapshot(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen", "--include-excluded")

    rebuilt, differences = reproduce(target)

    published = json.loads((target / "results.json").read_text())["payload"]
    assert published["statistics"]["bootstrap_draws"] == 2000
    assert (
        published["judgments"] == Judgment.objects.filter(item__study=gold_study).counted().count()
    )
    assert Judgment.objects.filter(item__study=gold_study).count() > published["judgments"]
    for family, difference in differences.items():
        assert difference.missing == [], family
        assert difference.points <= 1e-6, family
        assert difference.compared > 0 or family == "agreement_by_round", family
        # Every interval is a closed form now (two-way cluster-robust), so bounds are
        # rebuilt exactly, whatever order the snapshot numbers sources and annotators in.
        assert difference.intervals <= 1e-6, family
    assert differences["agreement"].compared > 0 and differences["bradley_terry"].compared > 0
    annotators = published["annotators"]
    assert sum(a["judgments"] for a in annotators.values()) == published["judgments"]
    assert sum(a["excluded"] for a in annotators.values()) == 3
    assert sum(a["gold_checked"] for a in annotators.values()) > 0
    assert rebuilt["annotators"].keys() == annotators.keys()


def test_the_default_snapshot_reproduces_too(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen")

    _rebuilt, differences = reproduce(target)

    assert all(d.points <= 1e-6 and not d.missing for d in differences.values())


def test_the_command_prints_the_largest_difference_per_family(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen", "--include-excluded")
    out = io.StringIO()

    call_command("reproduce", str(target), stdout=out)

    text = out.getvalue()
    for family in ("leaderboard", "paired_differences", "bradley_terry", "agreement", "annotators"):
        assert f"\n{family} " in text
    assert "every point figure reproduced within 1e-06" in text


def test_a_changed_rating_is_caught(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen")
    lines = (target / "ratings.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    while not row["counted"] or row["position"] == "set":
        lines = lines[1:] + lines[:1]
        row = json.loads(lines[0])
    row["value"] = 1 if row["value"] != 1 else 5
    lines[0] = json.dumps(row, ensure_ascii=False)
    (target / "ratings.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(CommandError, match=r"not reproduced: .*leaderboard"):
        call_command("reproduce", str(target), stdout=io.StringIO())


def test_a_directory_that_is_not_a_snapshot_is_refused(tmp_path):
    with pytest.raises(CommandError, match=r"manifest\.json is missing"):
        call_command("reproduce", str(tmp_path), stdout=io.StringIO())
    with pytest.raises(CommandError, match="not a directory"):
        call_command("reproduce", str(tmp_path / "nowhere"), stdout=io.StringIO())


def test_compare_reports_figures_only_one_side_has():
    difference = compare({"a": {"mean": 1.0, "ci_low": 0.5}}, {"a": {"mean": 1.0}, "b": {"n": 2}})

    assert difference.missing == ["a/ci_low", "b/n"]
    assert difference.points == 0.0


@pytest.mark.integration
def test_copy_writes_the_same_gold_and_flag_columns_as_the_python_rows(postgres, gold_study):
    from annotation.exports import export_chunks

    by_copy = b"".join(export_chunks(gold_study, "csv", True, engine="copy"))
    by_python = b"".join(export_chunks(gold_study, "csv", True, engine="python"))

    assert by_copy == by_python
    import csv

    rows = list(csv.DictReader(io.StringIO(by_copy.decode())))
    assert {r["is_gold"] for r in rows} == {"True", "False"}
    assert {r["gold_passed"] for r in rows} == {"True", "False", ""}
    assert "failed_check" in {r["open_flags"] for r in rows}
    assert {r["counted"] for r in rows if r["excluded"] == "True"} == {"False"}
