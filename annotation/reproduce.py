"""Rebuild a study's results from an export snapshot alone, and compare.

Reads the snapshot's `ratings.jsonl` (every rating with its judgment's `counted`,
ids and positions), `answers.jsonl` (each answer's length and emoji/kaomoji, for the
style-adjusted differences), `manifest.json` (metrics, reference source) and `results.json`
(what the platform published); never the database. The counted ratings become the
same inputs the workers build from the database, and the same pure statistics turn
them into figures. The report gives, per figure family, the largest difference between
the published and the rebuilt figures, separately for points and interval bounds, and
names every figure that differs beyond rounding. Before that, every file the manifest
lists is checked against its SHA-256 and size: a snapshot whose files were changed after
the export is not the data the results were published from.

Points must agree to rounding (1e-6), and so must interval bounds: every interval is a
closed form (two-way cluster-robust by cell and annotator; for alpha with jackknife
variances and a fiducial quantile found by quadrature, for Bradley-Terry a sandwich),
which does not depend on the order in which the snapshot numbers sources and annotators.
The only draws left, the cell bootstrap that screens Bradley-Terry strengths for near
separation, decide a status, not a bound.
"""

import hashlib
import json
import math
import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .exports.snapshot import ANSWERS_FILE, MANIFEST, RESULTS_FILE
from .stats.arrays import COLUMNS

RATINGS_FILE = "ratings.jsonl"
INTERVAL_KEYS = {"ci_low", "ci_high", "win_low", "win_high", "icc_ci_low", "icc_ci_high"}
# Figures are published rounded to 6 decimals (`stats.arrays.clean`): two roundings of
# the same number differ by at most this, anything more is a different figure.
TOLERANCE = 1e-6 + 1e-12
# Per-annotator figures the export cannot carry: flags raised on an annotator rather
# than on a judgment, and gold checks of excluded judgments when they were left out.
NOT_IN_EXPORT = {"open_flags"}
EXCLUDED_ONLY = {"excluded", "gold_passed", "gold_checked"}


class SnapshotError(ValueError):
    """The directory is not a snapshot that can be reproduced."""


@dataclass
class FamilyDifference:
    points: float = 0.0
    intervals: float = 0.0
    compared: int = 0
    missing: list = field(default_factory=list)
    # Paths of the figures (points, bounds or statuses) that differ beyond rounding.
    differing: list = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return not self.missing and not self.differing


def verify_files(directory, manifest: dict) -> list[str]:
    """What is wrong with the snapshot's files against the manifest's record of them:
    one line per file that is missing or whose size or SHA-256 differs. Empty when every
    listed file is as exported."""
    directory = Path(directory)
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return ["manifest.json lists no files and their checksums"]
    problems = []
    for name, described in sorted(files.items()):
        path = directory / name
        if not path.is_file():
            problems.append(f"{name}: missing")
            continue
        digest, size = hashlib.sha256(), 0
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
        if digest.hexdigest() != described.get("sha256"):
            problems.append(
                f"{name}: SHA-256 {digest.hexdigest()[:12]}… differs from the manifest's "
                f"{str(described.get('sha256'))[:12]}…"
                + (
                    f" ({size} bytes, manifest {described.get('bytes')})"
                    if size != described.get("bytes")
                    else ""
                )
            )
    return problems


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise SnapshotError(f"{path.name} is missing from {path.parent}") from error
    except json.JSONDecodeError as error:
        raise SnapshotError(f"{path.name} is not valid JSON: {error}") from error


@contextmanager
def opened_snapshot(path) -> Iterator[Path]:
    """The snapshot directory `path` names: the directory itself, the one folder in it that
    holds the manifest (a downloaded snapshot zip unpacks to such a folder), or the zip
    file itself, unpacked into a temporary directory for as long as it is read."""
    path = Path(path)
    if path.is_file() and zipfile.is_zipfile(path):
        with tempfile.TemporaryDirectory(prefix="snapshot-") as unpacked:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(unpacked)  # names with ".." or a leading "/" are made safe
            yield _manifest_folder(Path(unpacked), shown=path)
        return
    yield _manifest_folder(path, shown=path)


def _manifest_folder(directory: Path, *, shown: Path) -> Path:
    if not directory.is_dir():
        raise SnapshotError(f"{shown} is not a directory, nor a zip file of a snapshot")
    if (directory / MANIFEST).exists():
        return directory
    inner = [d for d in sorted(directory.iterdir()) if d.is_dir() and (d / MANIFEST).exists()]
    if len(inner) == 1:
        return inner[0]
    if inner:
        raise SnapshotError(
            f"{MANIFEST} is missing from {shown}, and {len(inner)} folders in it hold one: "
            "name the snapshot's own folder"
        )
    raise SnapshotError(f"{MANIFEST} is missing from {shown}")


def read_snapshot(directory) -> tuple[dict, dict, list[dict]]:
    """(manifest, published results document, rating rows)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SnapshotError(f"{directory} is not a directory")
    manifest = _read_json(directory / MANIFEST)
    if len(manifest.get("studies", [])) != 1:
        raise SnapshotError("reproduce needs a snapshot of one study (export_ratings --study)")
    results = _read_json(directory / RESULTS_FILE)
    rows = []
    try:
        with open(directory / RATINGS_FILE, encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise SnapshotError(f"{RATINGS_FILE} line {number}: {error}") from error
    except FileNotFoundError as error:
        raise SnapshotError(f"{RATINGS_FILE} is missing from {directory}") from error
    return manifest, results, rows


def read_answer_styles(directory) -> dict[int, tuple[int, int]]:
    """Answer id -> (length, emoji and kaomoji) from the snapshot's answers file; empty
    for a snapshot taken before it had one (its style figures then cannot be rebuilt)."""
    path = Path(directory) / ANSWERS_FILE
    if not path.exists():
        return {}
    styles = {}
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                row = json.loads(line)
                styles[int(row["answer"])] = (int(row["length"]), int(row["decorations"]))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise SnapshotError(f"{ANSWERS_FILE} line {number}: {error}") from error
    return styles


def _integer(value) -> int:
    return 0 if value in ("", None) else int(value)


def inputs_from_rows(manifest: dict, rows: list[dict]):
    """The StudyInputs of the counted ratings in `rows`, with metrics and sources
    numbered by the snapshot (metrics by their position, sources by slug)."""
    from .results.document import LEADERBOARD_DIMENSIONS
    from .stats.study import MetricInfo, SourceInfo, StudyInputs

    (study,) = manifest["studies"]
    metrics = [
        MetricInfo(number, m["slug"], m["dimension"], m.get("label_zh", ""), m.get("label_en", ""))
        for number, m in enumerate(
            sorted(manifest["metrics"], key=lambda m: (m["position"], m["slug"])), start=1
        )
    ]
    metric_code = {m.slug: m.pk for m in metrics}
    counted = [row for row in rows if row["counted"]]
    slugs = sorted({row["source"] for row in counted} | {study["reference_source"]})
    source_code = {slug: number for number, slug in enumerate(slugs, start=1)}
    kinds = {row["source"]: row["source_kind"] for row in counted}
    sources = {source_code[s]: SourceInfo(s, kinds.get(s, "")) for s in slugs}
    pseudonyms = sorted({row["annotator"] for row in counted})
    annotator_code = {name: number for number, name in enumerate(pseudonyms, start=1)}

    columns = defaultdict(list)
    judgments = {}
    for row in counted:
        is_pair = row["position"] != "set"
        columns["value"].append(int(row["value"]))
        columns["metric"].append(metric_code[row["metric"]])
        columns["judgment"].append(int(row["judgment"]))
        columns["annotator"].append(annotator_code[row["annotator"]])
        columns["item"].append(int(row["item"]))
        columns["character"].append(int(row["character_id"]))
        columns["scenario"].append(_integer(row["scenario_id"]))
        columns["round"].append(_integer(row["round"]))
        columns["is_pair"].append(1 if is_pair else 0)
        columns["source"].append(source_code[row["source"]])
        columns["answer"].append(_integer(row["answer"]))
        judgment = judgments.setdefault(int(row["judgment"]), {"row": row, "left": None})
        if row["position"] in ("left", "right"):
            judgment[row["position"]] = source_code[row["source"]]
    data = {name: np.array(values, dtype=np.int64) for name, values in columns.items()}
    if not counted:
        data = {name: np.zeros(0, dtype=np.int64) for name in COLUMNS}

    preference_rows = []
    for judgment in judgments.values():
        row = judgment["row"]
        if row["position"] == "set":
            continue
        preference, guess = row["preference"], row["human_guess"]
        preference_rows.append(
            (
                int(row["character_id"]),
                _integer(row["scenario_id"]),
                source_code.get(preference) if preference not in ("", "tie") else None,
                preference == "tie",
                source_code.get(guess) if guess not in ("", "unsure") else None,
                guess != "",
                judgment.get("left"),
                judgment.get("right"),
                row["annotator"],
            )
        )
    inputs = StudyInputs(
        data=data,
        metrics=metrics,
        sources=sources,
        reference_source=source_code[study["reference_source"]],
        preference_rows=preference_rows,
        judgments=len(judgments),
        dimensions=LEADERBOARD_DIMENSIONS,
    )
    return inputs, {code: name for name, code in annotator_code.items()}


def annotator_figures(rows: list[dict], inputs, names: dict) -> dict:
    """The per-annotator figures the export can rebuild, keyed by pseudonym."""
    from .stats.annotators import deviations_of, median_seconds
    from .stats.arrays import seconds_value

    seconds, excluded, gold = defaultdict(dict), defaultdict(set), defaultdict(dict)
    everyone = set()
    for row in rows:
        name, judgment = row["annotator"], row["judgment"]
        everyone.add(name)
        if row["counted"]:
            seconds[name][judgment] = float(row["seconds_on_task"])
        if row["excluded"]:
            excluded[name].add(judgment)
        if row["gold_passed"] != "":
            gold[name][judgment] = bool(row["gold_passed"])
    deviations = deviations_of(inputs.data) if len(inputs.data["value"]) else {}
    out = {}
    for name in sorted(everyone):
        code = next((c for c, n in names.items() if n == name), None)
        distance, units = deviations.get(code, (float("nan"), 0))
        times = [seconds_value(s) for s in seconds[name].values()]
        out[name] = {
            "judgments": len(times),
            "excluded": len(excluded[name]),
            "mean_distance": None if math.isnan(distance) else round(float(distance), 6),
            "units_compared": units,
            "gold_passed": sum(gold[name].values()),
            "gold_checked": len(gold[name]),
            "median_seconds": median_seconds(times),
        }
    return out


def reproduce(directory) -> tuple[dict, dict[str, FamilyDifference]]:
    """Rebuild the figures of the snapshot in `directory`; return them and the
    differences from the published ones, per figure family. (The files' checksums are
    `verify_files`'s concern.)"""
    from .stats.rules import Rules
    from .stats.study import study_figures

    manifest, published, rows = read_snapshot(directory)
    payload = published.get("payload", published)
    statistics = payload.get("statistics")
    if not statistics:
        raise SnapshotError("results.json predates recorded statistics settings; recompute first")
    rules = Rules(
        draws=statistics["bootstrap_draws"],
        seed=statistics["seed"],
        min_judgments=statistics["min_judgments"],
        min_annotators=statistics["min_annotators"],
        confidence=statistics["confidence"],
    )
    inputs, names = inputs_from_rows(manifest, rows)
    inputs.answer_styles = read_answer_styles(directory)
    rebuilt = study_figures(inputs, rules)
    rebuilt["annotators"] = annotator_figures(rows, inputs, names)
    include_excluded = manifest.get("options", {}).get("include_excluded", False)
    differences = {}
    for family, figures in rebuilt.items():
        if family in ("statistics", "metrics", "sources"):
            continue
        ignored = set(NOT_IN_EXPORT)
        if family == "annotators" and not include_excluded:
            ignored |= EXCLUDED_ONLY
        differences[family] = compare(payload.get(family), figures, ignored)
    return rebuilt, differences


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _leaves(inner, (*path, str(key)))
    elif value is None or isinstance(value, bool | int | float | str):
        yield path, value


def compare(published, rebuilt, ignored=frozenset()) -> FamilyDifference:
    """Largest absolute differences between two figure trees: points, interval bounds,
    the paths that only one side has or where one side is undefined, and the paths whose
    values differ beyond rounding (a word such as a status: at all)."""
    result = FamilyDifference()
    left = {
        path: value for path, value in _leaves(published) if path[-1:] and path[-1] not in ignored
    }
    right = {
        path: value for path, value in _leaves(rebuilt) if path[-1:] and path[-1] not in ignored
    }
    if not isinstance(published, dict):
        left = {(): published}
        right = {(): rebuilt}
    for path in sorted(set(left) | set(right)):
        a, b = left.get(path, "missing"), right.get(path, "missing")
        if a == "missing" or b == "missing" or (a is None) != (b is None):
            result.missing.append("/".join(path))
            continue
        if a is None:
            continue
        result.compared += 1
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                result.differing.append(f"{'/'.join(path)}: {a} published, {b} rebuilt")
            continue
        difference = abs(float(a) - float(b))
        if path and path[-1] in INTERVAL_KEYS:
            result.intervals = max(result.intervals, difference)
        else:
            result.points = max(result.points, difference)
        if difference > TOLERANCE:
            result.differing.append(f"{'/'.join(path)}: {a} published, {b} rebuilt")
    return result
