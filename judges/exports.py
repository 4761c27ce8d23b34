"""The judges' ratings in their own file of a study's snapshot (`judge-ratings.csv`), with
the same study, item, answer and source ids as the human ratings' files, one row per
rating of a verdict. Failed calls have no ratings and are not in it."""

import csv
import hashlib
import io
import json
from pathlib import Path

from annotation.stats.style import decorations

from .models import JudgeCallStatus, JudgeRating

JUDGE_RATINGS_FILE = "judge-ratings.csv"
COLUMNS = [
    "study",
    "judge_run",
    "judge_model",
    "temperature",
    "language",
    "prompt_version",
    "rubric_version",
    "item",
    "order",
    "character",
    "scenario",
    "round",
    "answer",
    "answer_length",
    "answer_decorations",
    "character_id",
    "scenario_id",
    "source",
    "source_kind",
    "position",
    "metric",
    "value",
    "preference",
]


def _rows(study):
    ratings = JudgeRating.objects.filter(call__status=JudgeCallStatus.OK)
    if study is not None:
        ratings = ratings.filter(call__run__study=study)
    ratings = ratings.select_related(
        "call__run__study",
        "call__item__character",
        "call__item__scenario",
        "answer__source",
        "metric",
    ).order_by("call__run_id", "call__item_id", "call__order", "answer_id", "metric__position")
    for rating in ratings.iterator(chunk_size=2000):
        call, run, answer = rating.call, rating.call.run, rating.answer
        item = call.item
        left = answer.pk == call.left_answer_id
        if call.is_tie:
            preference = "tie"
        else:
            preference = "preferred" if call.preferred_answer_id == answer.pk else "other"
        yield [
            run.study.slug,
            run.pk,
            run.model,
            run.temperature,
            run.language,
            run.prompt_version,
            run.rubric_version,
            item.pk,
            call.order,
            item.character.key,
            item.scenario.number if item.scenario_id else "",
            item.round or "",
            answer.pk,
            len(answer.text),
            decorations(answer.text),
            item.character_id,
            item.scenario_id or "",
            answer.source.slug,
            answer.source.kind,
            "a" if left else "b",
            rating.metric.slug,
            rating.value,
            preference,
        ]


def judge_ratings_write(path: Path, study) -> dict | None:
    """Write the file when there is a judge rating to write; describe it for the manifest."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    rows = 0
    writer.writerow(COLUMNS)
    for row in _rows(study):
        writer.writerow(row)
        rows += 1
    if not rows:
        return None
    data = buffer.getvalue().encode("utf-8")
    Path(path).write_bytes(data)
    return {
        "kind": "judge_ratings",
        "rows": rows,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


JUDGE_FIGURES_FILE = "judge-figures.json"


def judge_figures_write(path: Path, study) -> dict | None:
    """Each judge run's figures, computed now from the data the snapshot holds (in its
    transaction), with the interval rules: what `reproduce` rebuilds from
    judge-ratings.csv and ratings.jsonl alone. Only in a one-study snapshot."""
    from annotation.results.document import rules_from_settings

    from .selectors import judge_inputs, runs_of_study
    from .stats import judge_figures

    if study is None:
        return None
    rules = rules_from_settings()
    runs = [run for run in runs_of_study(study) if run.calls.filter(status="ok").exists()]
    if not runs:
        return None
    document = {
        "rules": {
            "draws": rules.draws,
            "seed": rules.seed,
            "min_judgments": rules.min_judgments,
            "min_annotators": rules.min_annotators,
            "confidence": rules.confidence,
        },
        "runs": [
            {
                "run": run.pk,
                "model": run.model,
                "self_source": run.self_source.slug if run.self_source_id else None,
                "figures": judge_figures(judge_inputs(run), rules),
            }
            for run in runs
        ],
    }
    data = (json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()
    Path(path).write_bytes(data)
    return {
        "kind": "judge_figures",
        "rows": len(runs),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
