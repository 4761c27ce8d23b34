"""The research export: exact columns, every rating once, unblinded, injection-safe."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.exports import LONG_COLUMNS, neutralise
from annotation.models import Item, ItemAnswer, Judgment, Rating
from annotation.simulation import simulate_study
from tests.builders import make_study, researcher_named

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


HOSTILE = [
    '=HYPERLINK("http://evil")',
    "+1",
    "-2",
    "@SUM(A1)",
    "a, b",
    'she said "hi"',
    "two\nlines",
    "crlf\r\nend",
    "",
    "  spaced  ",
    "\\.",
    "tab\there",
    "'already quoted",
    "中文，逗号、“引号”😀",
]
AWKWARD_SECONDS = [2.675, 12.0, 0.0004, 1234.5675, 30.1005, 1e-9, 59.9995]


@pytest.fixture
def hostile(demo_dataset, luffy, settings):
    """Both rounds, diversity sets, human guesses, ties, exclusions, and text a
    spreadsheet or a CSV parser could trip on."""
    from datetime import UTC, datetime

    from annotation.models import AnnotatorProfile
    from dialogues.models import Character

    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(
        overlap=1, rounds=(1, 2), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    # Every item judged, so that the rows cover every kind of item whatever the random
    # lease order: an annotator who has seen an answer in a pair can no longer take the
    # diversity set that holds it, so fresh annotators are added until none is left.
    annotators = 3
    simulate_study(study=study, annotators=annotators, seed=4)
    while Item.objects.filter(study=study, judgment_count=0).exists() and annotators < 30:
        annotators += 3
        simulate_study(study=study, annotators=annotators, seed=4)
    assert not Item.objects.filter(study=study, judgment_count=0).exists()
    judgments = list(Judgment.objects.filter(item__study=study).order_by("pk"))
    for index, judgment in enumerate(judgments):
        Judgment.objects.filter(pk=judgment.pk).update(
            comment=HOSTILE[index % len(HOSTILE)],
            seconds_on_task=AWKWARD_SECONDS[index % len(AWKWARD_SECONDS)],
        )
    Judgment.objects.filter(pk=judgments[0].pk).update(
        submitted_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), is_tie=True
    )
    pairs = [j for j in judgments[1:] if j.item.kind == "pair"]
    for judgment in pairs[:5]:
        services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")
    # One annotator was unsure which answer a fan wrote, another guessed.
    Judgment.objects.filter(pk=pairs[5].pk).update(human_guess_asked=True, human_guess=None)
    Judgment.objects.filter(pk=pairs[6].pk).update(
        human_guess_asked=True, human_guess=pairs[6].item.slots.first().answer
    )
    profile = AnnotatorProfile.objects.filter(user=judgments[0].annotator).get()
    AnnotatorProfile.objects.filter(pk=profile.pk).update(pseudonym="-dash")
    other = judgments[-1].annotator
    assert other != judgments[0].annotator
    AnnotatorProfile.objects.filter(user=other).update(pseudonym="\ttab")
    Character.objects.filter(pk=luffy.pk).update(key="=《海贼王》的路飞")
    return study


def test_the_hostile_study_covers_what_copy_must_format(hostile):
    judgments = Judgment.objects.filter(item__study=hostile)

    assert {j.item.round for j in judgments} == {1, 2, None}
    assert judgments.filter(item__kind="diversity", excluded=False).exists()
    assert judgments.filter(excluded=True).count() == 5
    assert judgments.filter(is_tie=True).exists() and judgments.filter(is_tie=False).exists()
    assert judgments.filter(human_guess_asked=True, human_guess__isnull=True).exists()
    assert judgments.filter(human_guess__isnull=False).exists()


@pytest.mark.integration
@pytest.mark.parametrize("include_excluded", [False, True])
@pytest.mark.parametrize("whole_database", [False, True])
def test_copy_writes_the_same_bytes_as_the_python_rows(
    postgres, hostile, include_excluded, whole_database
):
    from annotation.exports import export_chunks

    study = None if whole_database else hostile

    by_copy = b"".join(export_chunks(study, "csv", include_excluded, engine="copy"))
    by_python = b"".join(export_chunks(study, "csv", include_excluded, engine="python"))

    assert by_copy == by_python
    rows = list(csv.DictReader(io.StringIO(by_copy.decode())))
    assert (
        len(rows)
        == Rating.objects.filter(
            judgment__excluded__in=[False, True] if include_excluded else [False]
        ).count()
    )
    assert {r["comment"] for r in rows} >= {'\'=HYPERLINK("http://evil")', "two\nlines", "\\."}
    assert {"'-dash", "'\ttab"} <= {r["annotator"] for r in rows}
    assert {r["seconds_on_task"] for r in rows} >= {"2.675", "12.0", "0.0", "1234.568", "30.101"}
    assert "2026-01-02T03:04:05.000000Z" in {r["submitted_at"] for r in rows}
    assert {r["position"] for r in rows} == {"left", "right", "set"}


@pytest.mark.integration
def test_the_command_and_the_api_use_copy_on_postgresql(postgres, hostile, monkeypatch, client):

    from annotation.exports import postgres as copy_module

    calls = []
    real = copy_module.long_csv_chunks

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr("annotation.exports.streams.long_csv_chunks", spy)
    researcher = researcher_named("copy@example.com")
    client.force_login(researcher)

    by_command = export("--study", hostile.slug)
    response = client.get(f"/api/v1/studies/{hostile.slug}/export/", {"kind": "csv"})
    by_api = b"".join(response.streaming_content).decode()
    export("--study", hostile.slug, "--format", "wide")

    assert len(calls) == 2
    assert by_command == by_api


def sha256_of(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_snapshot_is_three_files_and_a_manifest_that_describes_them(filled, tmp_path):
    excluded = Judgment.objects.filter(item__study=filled).first()
    services.judgment_exclude(judgment=excluded, decided_by=None, reason="test")
    target = tmp_path / "frozen"

    call_command(
        "export_ratings", "--snapshot", str(target), "--study", filled.slug, stderr=io.StringIO()
    )

    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(p.name for p in target.iterdir()) == [
        "answers.jsonl",
        "audit.jsonl",
        "manifest.json",
        "ratings-long.csv",
        "ratings-wide.csv",
        "ratings.jsonl",
        "results.json",
    ]
    for name, described in manifest["files"].items():
        assert described["sha256"] == sha256_of(target / name), name
        assert described["bytes"] == (target / name).stat().st_size
    long_rows = list(csv.DictReader(io.StringIO((target / "ratings-long.csv").read_text())))
    wide_rows = list(csv.DictReader(io.StringIO((target / "ratings-wide.csv").read_text())))
    jsonl = (target / "ratings.jsonl").read_text(encoding="utf-8").splitlines()
    included = Rating.objects.filter(judgment__item__study=filled, judgment__excluded=False)
    assert manifest["files"]["ratings-long.csv"]["rows"] == len(long_rows) == included.count()
    assert manifest["files"]["ratings.jsonl"]["rows"] == len(jsonl) == included.count()
    judgments = Judgment.objects.filter(item__study=filled)
    assert manifest["files"]["ratings-wide.csv"]["rows"] == len(wide_rows)
    assert len(wide_rows) == judgments.count() - 1
    assert manifest["judgments"] == {
        "included": judgments.count() - 1,
        "excluded": 1,
        "gold": 0,
        "counted": judgments.count() - 1,
    }
    (settings_,) = manifest["studies"]
    assert settings_["slug"] == filled.slug and settings_["overlap"] == 1
    answers = [json.loads(line) for line in (target / "answers.jsonl").read_text().splitlines()]
    texts = dict(
        ItemAnswer.objects.filter(item__study=filled, item__kind="pair").values_list(
            "answer_id", "answer__text"
        )
    )
    assert manifest["files"]["answers.jsonl"]["rows"] == len(answers) == len(texts) > 0
    assert {a["answer"]: a["length"] for a in answers} == {a: len(t) for a, t in texts.items()}
    assert settings_["rounds"] == [1] and settings_["design"] == filled.design
    assert settings_["reference_source"] == "human"
    assert settings_["characters"] == [filled.characters.get().key]
    assert settings_["gold_rate"] == filled.gold_rate and settings_["status"] == "open"
    assert settings_["created_at"].endswith("Z")
    fluency = next(m for m in manifest["metrics"] if m["slug"] == "fluency")
    assert fluency["scale"] == {"minimum": 1, "maximum": 5}
    assert manifest["software"]["version"] == "0.1.0"
    assert manifest["created_at"].endswith("Z")
    assert manifest["command"] == f"export_ratings --snapshot {target} --study {filled.slug}"
    assert manifest["options"] == {"study": filled.slug, "include_excluded": False, "bom": False}
    # The exclusion above is in the snapshot's audit trail, with its reason.
    audit = [json.loads(line) for line in (target / "audit.jsonl").read_text().splitlines()]
    assert manifest["files"]["audit.jsonl"]["rows"] == len(audit)
    exclusions = [e for e in audit if e["target_type"] == "judgment"]
    assert [(e["study"], e["target_id"], e["note"]) for e in exclusions] == [
        (filled.slug, str(excluded.pk), "test")
    ]


def test_a_snapshot_refuses_a_directory_that_is_not_empty(filled, tmp_path):
    target = tmp_path / "used"
    target.mkdir()
    (target / "notes.txt").write_text("mine")

    with pytest.raises(CommandError, match="not an empty directory"):
        call_command("export_ratings", "--snapshot", str(target), stderr=io.StringIO())

    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["used"]


def test_a_snapshot_fills_an_existing_empty_directory(filled, tmp_path):
    target = tmp_path / "empty"
    target.mkdir()

    call_command("export_ratings", "--snapshot", str(target), stderr=io.StringIO())

    assert (target / "manifest.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]


def test_a_failed_snapshot_leaves_nothing_behind(filled, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("annotation.exports.snapshot.metric_definitions", broken)

    with pytest.raises(RuntimeError):
        call_command("export_ratings", "--snapshot", str(tmp_path / "new"), stderr=io.StringIO())

    assert list(tmp_path.iterdir()) == []


def test_the_software_version_survives_a_missing_package_and_git(monkeypatch):
    import subprocess
    from importlib import metadata

    from annotation.exports import software_version

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(metadata, "version", not_installed)
    monkeypatch.setattr(subprocess, "run", no_git)
    software_version.cache_clear()  # found once per process, as a new process would

    try:
        assert software_version() == {"name": "chatanime", "version": "0.1.0", "revision": None}
    finally:
        software_version.cache_clear()


def test_snapshot_and_output_file_do_not_mix(filled, tmp_path):
    with pytest.raises(CommandError, match="leave out -o"):
        export("--snapshot", str(tmp_path / "s"), "-o", str(tmp_path / "x.csv"))

    assert list(tmp_path.iterdir()) == []


class ClosedEarly(io.StringIO):
    """A reader that stops after the first rows, as `export_ratings | head` does."""

    def write(self, text):
        if self.tell() > 0:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


def test_a_reader_that_stops_early_ends_the_export_without_an_error(filled):
    out = ClosedEarly()

    call_command("export_ratings", "--study", filled.slug, stdout=out)

    assert out.getvalue().startswith("study,")
