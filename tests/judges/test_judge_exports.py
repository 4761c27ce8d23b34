"""Judge ratings are kept apart: the human judgments, their results and their export
files are the same with or without a judge run; the snapshot carries the judge's ratings
in a file of their own, with the same ids, which `reproduce` checks like the others."""

import csv
import hashlib
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Judgment, Rating, StudyResults
from annotation.services import study_recompute
from judges.exports import JUDGE_FIGURES_FILE, JUDGE_RATINGS_FILE
from judges.models import JudgeCall, JudgeRating, JudgeRun
from tests.builders import make_study

from .conftest import judge
from .fans import fans_rate

pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)


@pytest.fixture
def rated_study(demo_dataset):
    study = make_study(rounds=(1,), characters=None)
    fans_rate(study)
    study_recompute(study=study)
    return study


def snapshot(study, target):
    call_command(
        "export_ratings", "--snapshot", str(target), "--study", study.slug, stderr=io.StringIO()
    )
    return json.loads((target / "manifest.json").read_text(encoding="utf-8"))


def stable(payload: dict) -> dict:
    """The results without what changes on every recompute (its time and duration)."""
    return {k: v for k, v in payload.items() if k not in ("seconds", "software")}


def test_the_human_side_is_the_same_with_or_without_a_judge(
    rated_study, judge_key, judge_server, tmp_path
):
    before = snapshot(rated_study, tmp_path / "before")
    results_before = stable(StudyResults.objects.get(study=rated_study).payload)
    counts = (Judgment.objects.count(), Rating.objects.count())

    judge(judge_server, rated_study, "--items", "10", "--both-orders", "--rate", "100000")
    study_recompute(study=rated_study)

    assert (Judgment.objects.count(), Rating.objects.count()) == counts
    assert stable(StudyResults.objects.get(study=rated_study).payload) == results_before
    after = snapshot(rated_study, tmp_path / "after")
    assert after["judgments"] == before["judgments"]
    for name in ("ratings-long.csv", "ratings-wide.csv", "ratings.jsonl"):
        assert after["files"][name]["sha256"] == before["files"][name]["sha256"], name
    assert JUDGE_RATINGS_FILE not in before["files"]
    assert JUDGE_FIGURES_FILE not in before["files"]


def test_the_snapshot_holds_the_judge_ratings_in_their_own_file(
    rated_study, judge_key, judge_server, tmp_path
):
    # One call's replies are garbage in both passes (three attempts each): a failure.
    judge_server.script(*["garbage"] * 3, *["ok"] * 11, *["garbage"] * 3)
    with pytest.raises(CommandError, match="1 of 12 verdicts are still missing"):
        judge(
            judge_server, rated_study, "--items", "6", "--both-orders", "--rate", "100000",
            "--concurrency", "1",
        )  # fmt: skip
    failed = JudgeCall.objects.filter(status="failed")
    assert failed.count() == 1

    manifest = snapshot(rated_study, tmp_path / "frozen")
    path = tmp_path / "frozen" / JUDGE_RATINGS_FILE
    described = manifest["files"][JUDGE_RATINGS_FILE]
    assert described["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert described["rows"] == len(rows) == JudgeRating.objects.count() == 11 * 2 * 9
    # The same item and answer ids as the human ratings' file; no row of the failure.
    human_rows = list(
        csv.DictReader(io.StringIO((tmp_path / "frozen" / "ratings-long.csv").read_text()))
    )
    human_items = {row["item"] for row in human_rows}
    assert {row["item"] for row in rows} <= human_items
    assert str(failed.get().item_id) not in {
        row["item"] for row in rows if row["order"] == str(failed.get().order)
    }
    first = rows[0]
    call = JudgeCall.objects.get(item_id=first["item"], order=first["order"])
    assert first["source"] in (call.left_source.slug, call.right_source.slug)
    assert first["position"] == ("a" if int(first["answer"]) == call.left_answer_id else "b")
    assert {row["judge_model"] for row in rows} == {"judge-7b"}

    out = io.StringIO()
    call_command("reproduce", str(tmp_path / "frozen"), stdout=out)


def test_reproduce_rebuilds_the_judge_figures_from_the_snapshot_alone(
    rated_study, judge_key, judge_server, tmp_path
):
    judge(
        judge_server, rated_study, "--items", "30", "--both-orders", "--rate", "100000",
        "--self-source", "starling-rp",
    )  # fmt: skip
    target = tmp_path / "frozen"
    manifest = snapshot(rated_study, target)
    assert manifest["files"][JUDGE_FIGURES_FILE]["rows"] == 1
    published = json.loads((target / JUDGE_FIGURES_FILE).read_text(encoding="utf-8"))
    assert published["runs"][0]["figures"] == JudgeRun.objects.get().figures["figures"]

    out = io.StringIO()
    call_command("reproduce", str(target), stdout=out)
    for family in ("agreement", "biases", "leaderboard", "headline", "style"):
        assert f"judge {published['runs'][0]['run']} {family}" in out.getvalue()

    # A published judge figure that the files do not give is named.
    position = published["runs"][0]["figures"]["biases"]["position"]["judge"]
    position["rate"] += 0.1
    data = (json.dumps(published, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()
    (target / JUDGE_FIGURES_FILE).write_bytes(data)
    manifest["files"][JUDGE_FIGURES_FILE].update(
        bytes=len(data), sha256=hashlib.sha256(data).hexdigest()
    )
    (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"not reproduced: judge .* biases"):
        call_command("reproduce", str(target), stdout=out)
    assert "biases/position/judge/rate" in out.getvalue()


def scores_by_pair(left: str, right: str):
    """A judge whose score of an answer depends on the pair it is shown in, never on the
    side: the reference answer, shown in a pair with every compared source, gets a
    different score in each pair and the same in both orders of one."""
    pair = "\n".join(sorted((left, right)))

    def score(text: str) -> int:
        return 1 + int(hashlib.sha256(f"{pair}\n{text}".encode()).hexdigest(), 16) % 5

    score_left, score_right = score(left), score(right)
    if score_left == score_right:
        return score_left, score_right, "tie"
    return score_left, score_right, "A" if score_left > score_right else "B"


def test_the_judges_agreement_reproduces_when_an_answer_is_judged_in_several_pairs(
    rated_study, judge_key, judge_server, tmp_path
):
    judge_server.policy = scores_by_pair
    judge(
        judge_server, rated_study, "--both-orders", "--rate", "100000", "--concurrency", "1"
    )  # fmt: skip
    ratings = JudgeRating.objects.filter(call__order=1).values_list("answer", "metric", "value")
    values: dict[tuple, set] = {}
    for answer, metric, value in ratings:
        values.setdefault((answer, metric), set()).add(value)
    # What made the figure depend on the order of the judge's rows: an answer with more
    # than one first-order rating of a metric.
    assert any(len(found) > 1 for found in values.values())

    target = tmp_path / "frozen"
    snapshot(rated_study, target)
    published = json.loads((target / JUDGE_FIGURES_FILE).read_text(encoding="utf-8"))
    alpha = published["runs"][0]["figures"]["agreement"]["fluency"]["alpha"]
    assert alpha["enough_data"], alpha
    out = io.StringIO()
    call_command("reproduce", str(target), stdout=out)
    assert f"judge {published['runs'][0]['run']} agreement" in out.getvalue()
