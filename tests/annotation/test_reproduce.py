"""A study's published figures rebuilt from its export snapshot alone."""

import hashlib
import io
import json
import os

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import GoldCheck, Item, Judgment, QualityFlag, Study
from annotation.reproduce import TOLERANCE, compare, reproduce
from annotation.simulation import simulate_study
from tests.builders import make_study
from tests.helpers import run_manage

pytestmark = pytest.mark.django_db


@pytest.fixture
def gold_study(demo_dataset, luffy, settings):
    """Simulated, with gold items answered by every annotator who met them, three
    excluded judgments, and quality flags on judgments. Every pair of sources is
    compared (round robin), so that there are Bradley-Terry strengths to rebuild."""
    settings.CHATANIME_BOOTSTRAP_DRAWS = 2000
    study = make_study(
        overlap=3,
        rounds=(1, 2),
        include_diversity=True,
        ask_human_guess=True,
        characters=[luffy],
        design="round-robin",
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
        # Figures are published rounded to 6 decimals: two computations equal to 1e-12
        # can round one apart in the last place (`reproduce.TOLERANCE`), nothing more.
        assert difference.points <= TOLERANCE, family
        assert difference.compared > 0 or family == "agreement_by_round", family
        # Every interval is a closed form now (two-way cluster-robust), so bounds are
        # rebuilt exactly, whatever order the snapshot numbers sources and annotators in.
        assert difference.intervals <= TOLERANCE, family
    assert differences["agreement"].compared > 0 and differences["bradley_terry"].compared > 0
    annotators = published["annotators"]
    assert sum(a["judgments"] for a in annotators.values()) == published["judgments"]
    assert sum(a["excluded"] for a in annotators.values()) == 3
    assert sum(a["gold_checked"] for a in annotators.values()) > 0
    assert rebuilt["annotators"].keys() == annotators.keys()


def test_the_default_snapshot_reproduces_too(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen")

    _rebuilt, differences = reproduce(target)

    assert all(d.points <= TOLERANCE and not d.missing for d in differences.values())


def test_the_command_prints_the_largest_difference_per_family(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen", "--include-excluded")
    out = io.StringIO()

    call_command("reproduce", str(target), stdout=out)

    text = out.getvalue()
    for family in ("leaderboard", "paired_differences", "bradley_terry", "agreement", "annotators"):
        assert f"\n{family} " in text
    assert "every file matches the manifest" in text
    assert "points and interval bounds) reproduced within 1e-06" in text


def first_bound(payload):
    """(source, metric) of the first leaderboard figure with an interval."""
    for source, row in payload["leaderboard"].items():
        for metric, estimate in row.items():
            if estimate["ci_low"] is not None:
                return source, metric
    raise AssertionError("no leaderboard figure has an interval")


def rewrite_results(target, change, *, rehash: bool):
    """Change the published results document of a snapshot; with `rehash`, record the
    changed file's checksum in the manifest as if it had been exported that way."""
    path = target / "results.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document["payload"])
    data = (json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()
    path.write_bytes(data)
    if rehash:
        manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
        manifest["files"]["results.json"].update(
            sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)
        )
        (target / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("shift", [0.05, 0.5])
def test_a_published_bound_that_was_changed_is_named(gold_study, tmp_path, shift):
    """Even with the manifest rewritten to match, a bound the statistics do not give is
    caught by recomputing it, and named."""
    target = snapshot(gold_study, tmp_path / "frozen")
    published = json.loads((target / "results.json").read_text())["payload"]
    source, metric = first_bound(published)

    def widen(payload):
        payload["leaderboard"][source][metric]["ci_high"] += shift

    rewrite_results(target, widen, rehash=True)
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"not reproduced: leaderboard$"):
        call_command("reproduce", str(target), stdout=out)
    assert f"differs: leaderboard/{source}/{metric}/ci_high" in out.getvalue()


def test_results_published_under_another_methods_version_are_said_to_be(gold_study, tmp_path):
    """A snapshot exported before the statistics changed: its figures may differ for that
    reason alone, and the report says so before naming them."""
    target = snapshot(gold_study, tmp_path / "frozen")

    def older(payload):
        payload["statistics"]["methods"]["version"] = "chatanime-methods/1"

    rewrite_results(target, older, rehash=True)
    out = io.StringIO()
    call_command("reproduce", str(target), stdout=out)

    assert "published under chatanime-methods/1 methods version" in out.getvalue()
    untouched = snapshot(gold_study, tmp_path / "fresh")
    out = io.StringIO()
    call_command("reproduce", str(untouched), stdout=out)
    assert "methods version" not in out.getvalue()


def test_a_changed_status_is_named(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen")
    published = json.loads((target / "results.json").read_text())["payload"]
    source = next(iter(published["bradley_terry"]))
    # The simulation's leases are not seeded: whichever status the source has, another.
    other = "ok" if published["bradley_terry"][source]["status"] != "ok" else "near_separation"

    def relabel(payload):
        payload["bradley_terry"][source]["status"] = other

    rewrite_results(target, relabel, rehash=True)
    out = io.StringIO()

    with pytest.raises(CommandError, match="bradley_terry"):
        call_command("reproduce", str(target), stdout=out)
    assert f"differs: bradley_terry/{source}/status" in out.getvalue()


def test_a_file_changed_after_the_export_is_named(gold_study, tmp_path):
    """The audit trail enters no figure: only its checksum can tell it was changed."""
    target = snapshot(gold_study, tmp_path / "frozen")
    audit = target / "audit.jsonl"
    audit.write_bytes(audit.read_bytes() + b'{"study": "x", "action": "invented"}\n')
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"not reproduced: file audit\.jsonl$"):
        call_command("reproduce", str(target), stdout=out)
    assert "file changed since the export: audit.jsonl: SHA-256" in out.getvalue()


def test_a_missing_file_is_named(gold_study, tmp_path):
    target = snapshot(gold_study, tmp_path / "frozen")
    (target / "ratings-wide.csv").unlink()

    with pytest.raises(CommandError, match=r"file ratings-wide\.csv"):
        call_command("reproduce", str(target), stdout=io.StringIO())


def test_the_command_exits_non_zero_on_a_tampered_snapshot_and_zero_on_an_untouched_one(
    gold_study, tmp_path
):
    untouched = snapshot(gold_study, tmp_path / "untouched")
    tampered = snapshot(gold_study, tmp_path / "tampered")
    published = json.loads((tampered / "results.json").read_text())["payload"]
    source, metric = first_bound(published)

    def narrow(payload):
        payload["leaderboard"][source][metric]["ci_low"] += 0.05

    rewrite_results(tampered, narrow, rehash=False)
    env = {
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.test",
        **{k: v for k, v in os.environ.items() if k in ("DATABASE_URL", "REDIS_URL")},
    }

    good = run_manage("reproduce", str(untouched), env=env)
    bad = run_manage("reproduce", str(tampered), env=env)

    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode != 0
    assert "not reproduced: file results.json, leaderboard" in bad.stderr
    assert f"leaderboard/{source}/{metric}/ci_low" in bad.stdout


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


def zipped(folder, archive_path):
    """A snapshot zipped as the results page's export job does: its files in one folder."""
    import zipfile

    with zipfile.ZipFile(archive_path, "w") as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, f"{folder.name}/{path.name}")
    return archive_path


def test_the_results_pages_snapshot_zip_reproduces_as_downloaded_or_unpacked(gold_study, tmp_path):
    import shutil

    folder = snapshot(gold_study, tmp_path / "exported" / f"{gold_study.slug}-snapshot-7")
    archive = zipped(folder, tmp_path / "snapshot.zip")
    unpacked = tmp_path / "unpacked"
    shutil.unpack_archive(archive, unpacked)

    for given in (archive, unpacked, unpacked / folder.name):
        out = io.StringIO()
        call_command("reproduce", str(given), stdout=out)
        assert "every figure (points and interval bounds) reproduced" in out.getvalue(), given

    (folder / "ratings-wide.csv").write_text("study\n", encoding="utf-8")
    tampered = zipped(folder, tmp_path / "tampered.zip")
    with pytest.raises(CommandError, match=r"not reproduced: file ratings-wide\.csv"):
        call_command("reproduce", str(tampered), stdout=io.StringIO())


def test_a_file_that_is_not_a_snapshot_zip_is_refused(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello", encoding="utf-8")
    with pytest.raises(CommandError, match="not a directory, nor a zip file of a snapshot"):
        call_command("reproduce", str(notes), stdout=io.StringIO())
    (tmp_path / "nothing").mkdir()
    empty = zipped(tmp_path / "nothing", tmp_path / "empty.zip")
    with pytest.raises(CommandError, match=r"manifest\.json is missing"):
        call_command("reproduce", str(empty), stdout=io.StringIO())


def test_compare_reports_figures_only_one_side_has():
    difference = compare({"a": {"mean": 1.0, "ci_low": 0.5}}, {"a": {"mean": 1.0}, "b": {"n": 2}})

    assert difference.missing == ["a/ci_low", "b/n"]
    assert difference.points == 0.0


def test_compare_names_figures_beyond_rounding_only():
    published = {"a": {"mean": 1.000001, "ci_low": 0.5, "status": "ok"}}
    rebuilt = {"a": {"mean": 1.0, "ci_low": 0.45, "status": "separated"}}

    difference = compare(published, rebuilt)

    assert difference.differing == [
        "a/ci_low: 0.5 published, 0.45 rebuilt",
        "a/status: ok published, separated rebuilt",
    ]
    assert not difference.reproduced


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
    # A judgment's open flags are its kinds, `;`-separated: a failed check may come with
    # `too_fast` when the simulated annotator was quick on that item.
    assert "failed_check" in {kind for r in rows for kind in r["open_flags"].split(";")}
    assert {r["counted"] for r in rows if r["excluded"] == "True"} == {"False"}
