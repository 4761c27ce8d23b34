"""Rebuild the judges' figures from a one-study snapshot alone, and compare: the judge's
verdicts and ratings from `judge-ratings.csv`, the humans' from `ratings.jsonl`, the
published figures and their rules from `judge-figures.json`; never the database. Sources
and metrics are numbered by the snapshot; every figure is keyed by slug and does not
depend on that numbering, nor on the annotators' (pseudonyms here, ids in the database)."""

import csv
import json
from pathlib import Path

from annotation.reproduce import SnapshotError, compare, read_snapshot
from annotation.stats.rules import Rules

from .exports import JUDGE_FIGURES_FILE, JUDGE_RATINGS_FILE
from .stats import LEFT, RIGHT, TIE, JudgeInputs, Scores, Verdicts, judge_figures

CELL = 1000  # as `selectors.report`


def _number(value) -> int:
    return 0 if value in ("", None) else int(value)


class _Codes(dict):
    """A number for each name, in the order names are first seen."""

    def __missing__(self, name):
        self[name] = len(self) + 1
        return self[name]


def _judge_inputs(rows, run: int, sources: _Codes, metrics: _Codes):
    calls: dict[tuple, dict] = {}
    scores = []
    for row in rows:
        if int(row["judge_run"]) != run:
            continue
        item, order, answer = int(row["item"]), int(row["order"]), int(row["answer"])
        cell = int(row["character_id"]) * CELL + _number(row["scenario_id"])
        source = sources[row["source"]]
        value = int(row["value"])
        scores.append((answer, item, cell, 0, order, source, metrics[row["metric"]], value))
        call = calls.setdefault((item, order), {"cell": cell, "answers": {}})
        side = call["answers"].setdefault(
            row["position"],
            {"source": source, "length": int(row["answer_length"]), "values": []},
        )
        side["values"].append(value)
        if row["preference"] == "preferred":
            call["preferred"] = LEFT if row["position"] == "a" else RIGHT
        elif row["preference"] == "tie":
            call["preferred"] = TIE
    verdicts = []
    for (item, order), call in calls.items():
        left, right = call["answers"]["a"], call["answers"]["b"]
        verdicts.append(
            (
                item, call["cell"], 0, order, left["source"], right["source"], left["length"],
                right["length"], call.get("preferred", TIE),
                sum(left["values"]) / len(left["values"]),
                sum(right["values"]) / len(right["values"]),
            )
        )  # fmt: skip
    return Verdicts.from_rows(verdicts), Scores.from_rows(scores)


def _human_inputs(rows, lengths, sources: _Codes, metrics: _Codes):
    raters = _Codes()
    scores = []
    judgments: dict[int, dict] = {}
    for row in rows:
        if not row["counted"] or row["position"] not in ("left", "right"):
            continue
        item, answer = int(row["item"]), int(row["answer"])
        cell = int(row["character_id"]) * CELL + _number(row["scenario_id"])
        rater, source = raters[row["annotator"]], sources[row["source"]]
        value = int(row["value"])
        scores.append((answer, item, cell, rater, 1, source, metrics[row["metric"]], value))
        judgment = judgments.setdefault(
            int(row["judgment"]),
            {"item": item, "cell": cell, "rater": rater, "preference": row["preference"]},
        )
        side = judgment.setdefault(row["position"], {"source": row["source"], "values": []})
        side["values"].append(value)
    verdicts = []
    for judgment in judgments.values():
        left, right = judgment.get("left"), judgment.get("right")
        if left is None or right is None:
            continue
        preference = judgment["preference"]
        side = (
            LEFT
            if preference == left["source"]
            else RIGHT
            if preference == right["source"]
            else TIE
        )
        item = judgment["item"]
        verdicts.append(
            (
                item, judgment["cell"], judgment["rater"], 1, sources[left["source"]],
                sources[right["source"]], lengths.get((item, left["source"]), 0),
                lengths.get((item, right["source"]), 0), side,
                sum(left["values"]) / len(left["values"]),
                sum(right["values"]) / len(right["values"]),
            )
        )  # fmt: skip
    return Verdicts.from_rows(verdicts), Scores.from_rows(scores)


def _keyed(value):
    """Lists as dicts keyed by their index, so that `compare` reaches every figure."""
    if isinstance(value, list):
        return {str(i): _keyed(v) for i, v in enumerate(value)}
    if isinstance(value, dict):
        return {k: _keyed(v) for k, v in value.items()}
    return value


def judges_rebuilt(directory) -> tuple[dict, list[dict]]:
    """(published document, rebuilt figures per run) of the snapshot in `directory`."""
    directory = Path(directory)
    manifest, _results, rows = read_snapshot(directory)
    try:
        published = json.loads((directory / JUDGE_FIGURES_FILE).read_text(encoding="utf-8"))
        with open(directory / JUDGE_RATINGS_FILE, encoding="utf-8", newline="") as file:
            judge_rows = list(csv.DictReader(file))
    except FileNotFoundError as error:
        raise SnapshotError(f"{error.filename} is missing from {directory}") from error
    rules = Rules(**published["rules"])
    (study,) = manifest["studies"]
    metrics = _Codes()
    for metric in sorted(manifest["metrics"], key=lambda m: (m["position"], m["slug"])):
        if not metric.get("for_diversity"):
            # Numbered in the rating form's order.
            metrics[metric["slug"]] = len(metrics) + 1
    sources = _Codes()
    lengths = {(int(row["item"]), row["source"]): int(row["answer_length"]) for row in judge_rows}
    styles = {
        int(row["answer"]): (int(row["answer_length"]), int(row["answer_decorations"]))
        for row in judge_rows
    }
    human_verdicts, human_scores = _human_inputs(rows, lengths, sources, metrics)
    rebuilt = []
    for run in published["runs"]:
        judge_verdicts, judge_scores = _judge_inputs(judge_rows, run["run"], sources, metrics)
        self_slug = run["self_source"]
        inputs = JudgeInputs(
            judge_verdicts=judge_verdicts,
            judge_scores=judge_scores,
            human_verdicts=human_verdicts,
            human_scores=human_scores,
            metrics={code: slug for slug, code in metrics.items()},
            sources={code: slug for slug, code in sources.items()},
            reference=sources[study["reference_source"]],
            self_source=sources[self_slug] if self_slug else None,
            answer_styles=styles,
        )
        rebuilt.append(judge_figures(inputs, rules))
    return published, rebuilt


def judges_reproduce(directory) -> dict:
    """Differences between the published and the rebuilt judge figures, per run and
    figure family (`annotation.reproduce.compare`)."""
    published, rebuilt = judges_rebuilt(directory)
    differences = {}
    for run, figures in zip(published["runs"], rebuilt, strict=True):
        for family in ("agreement", "biases", "leaderboard", "headline", "style"):
            differences[f"judge {run['run']} {family}"] = compare(
                _keyed(run["figures"][family]), _keyed(figures[family])
            )
    return differences
