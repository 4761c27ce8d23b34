"""A judge run's figures beside the humans of its study, from the database: the judge's
verdicts and ratings, the study's counted human judgments and ratings on pairs (the same
definition of counted as every human figure), into the pure `judges.stats`."""

from collections import defaultdict

import numpy as np
from django.db import connection
from django.db.models import Avg

from annotation.models import COUNTED_JUDGMENT_SQL, ItemAnswer
from annotation.results.document import rules_from_settings
from annotation.results.loading import load_ratings
from annotation.stats.style import answer_style
from dialogues.models import Source

from ..models import JudgeCallStatus, JudgeRating, JudgeRun
from ..stats import (
    LEFT,
    RIGHT,
    TIE,
    JudgeInputs,
    Scores,
    Verdicts,
    judge_figures,
)
from .runs import metrics_of_pairs

CELL = 1000  # a cell is character * CELL + scenario, as in annotation's figures


def _lengths(study) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[int, tuple[int, int]]]:
    """(item, source) -> (answer id, length in characters) for the study's pairs, and
    answer id -> (length, emoji and kaomoji)."""
    found, styles = {}, {}
    for item, answer, source, text in ItemAnswer.objects.filter(
        item__study=study, item__kind="pair"
    ).values_list("item_id", "answer_id", "answer__source_id", "answer__text"):
        found[(item, source)] = (answer, len(text))
        styles[answer] = answer_style(text)
    return found, styles


def _judge_inputs(run: JudgeRun, lengths) -> tuple[Verdicts, Scores]:
    calls = list(
        run.calls.filter(status=JudgeCallStatus.OK).values_list(
            "pk", "item_id", "item__character_id", "item__scenario_id", "order",
            "left_answer_id", "right_answer_id", "left_source_id", "right_source_id",
            "preferred_answer_id", "is_tie",
        )
    )  # fmt: skip
    score = {
        (row["call_id"], row["answer_id"]): row["mean"]
        for row in JudgeRating.objects.filter(call__run=run, call__status=JudgeCallStatus.OK)
        .values("call_id", "answer_id")
        .annotate(mean=Avg("value"))
    }
    verdicts = []
    for pk, item, character, scenario, order, left, right, ls, rs, preferred, tie in calls:
        side = TIE if tie else (LEFT if preferred == left else RIGHT)
        verdicts.append(
            (
                item, character * CELL + (scenario or 0), 0, order, ls, rs,
                lengths[(item, ls)][1], lengths[(item, rs)][1], side,
                score.get((pk, left), np.nan), score.get((pk, right), np.nan),
            )
        )  # fmt: skip
    ratings = JudgeRating.objects.filter(call__run=run, call__status=JudgeCallStatus.OK)
    scores = [
        (answer, item, character * CELL + (scenario or 0), 0, order, source, metric, value)
        for answer, item, character, scenario, order, source, metric, value in ratings.values_list(
            "answer_id", "call__item_id", "call__item__character_id", "call__item__scenario_id",
            "call__order", "answer__source_id", "metric_id", "value",
        )
    ]  # fmt: skip
    return Verdicts.from_rows(verdicts), Scores.from_rows(scores)


HUMAN_VERDICTS_SQL = f"""
SELECT j.id, i.id, i.character_id, COALESCE(i.scenario_id, 0), j.annotator_id,
       a.left_source_id, a.right_source_id, j.preferred_answer_id, j.is_tie
FROM annotation_judgment j
JOIN annotation_item i ON i.id = j.item_id
JOIN annotation_assignment a ON a.id = j.assignment_id
WHERE i.study_id = %s AND i.kind = 'pair' AND {COUNTED_JUDGMENT_SQL}
  AND a.left_source_id IS NOT NULL
ORDER BY j.id
"""


def _mean(totals, judgment: int, answer: int) -> float:
    total, count = totals.get((judgment, answer), (0.0, 0))
    return total / count if count else np.nan


def _human_inputs(run: JudgeRun, lengths) -> tuple[Verdicts, Scores]:
    data = load_ratings(run.study)
    pairs = data["is_pair"] == 1
    data = {name: column[pairs] for name, column in data.items()}
    cell = data["character"] * CELL + data["scenario"]
    scores = Scores(
        answer=data["answer"], item=data["item"], cell=cell, rater=data["annotator"],
        order=np.ones(len(cell), dtype=np.int64), source=data["source"],
        metric=data["metric"], value=data["value"],
    )  # fmt: skip
    metric_ids = {m.pk for m in metrics_of_pairs()}
    scores = scores.where(np.isin(scores.metric, list(metric_ids)))
    totals: dict[tuple[int, int], list[float]] = defaultdict(lambda: [0.0, 0])
    for judgment, answer, value in zip(
        data["judgment"].tolist(), data["answer"].tolist(), data["value"].tolist(), strict=True
    ):
        total = totals[(judgment, answer)]
        total[0] += value
        total[1] += 1
    with connection.cursor() as cursor:
        cursor.execute(HUMAN_VERDICTS_SQL, [run.study_id])
        rows = cursor.fetchall()
    verdicts = []
    for judgment, item, character, scenario, annotator, ls, rs, preferred, tie in rows:
        left_answer, left_length = lengths[(item, ls)]
        right_answer, right_length = lengths[(item, rs)]
        side = TIE if tie or preferred is None else (LEFT if preferred == left_answer else RIGHT)
        verdicts.append(
            (
                item, character * CELL + scenario, annotator, 1, ls, rs, left_length,
                right_length, side, _mean(totals, judgment, left_answer),
                _mean(totals, judgment, right_answer),
            )
        )  # fmt: skip
    return Verdicts.from_rows(verdicts), scores


def judge_inputs(run: JudgeRun) -> JudgeInputs:
    lengths, styles = _lengths(run.study)
    judge_verdicts, judge_scores = _judge_inputs(run, lengths)
    human_verdicts, human_scores = _human_inputs(run, lengths)
    return JudgeInputs(
        judge_verdicts=judge_verdicts,
        judge_scores=judge_scores,
        human_verdicts=human_verdicts,
        human_scores=human_scores,
        metrics={m.pk: m.slug for m in metrics_of_pairs()},
        sources=dict(Source.objects.values_list("pk", "slug")),
        reference=run.study.reference_source_id,
        self_source=run.self_source_id,
        answer_styles=styles,
    )


def judge_report(run: JudgeRun) -> dict:
    """The run's configuration, its costs and every figure beside the humans."""
    calls = run.calls.all()
    return {
        "run": run.pk,
        "study": run.study.slug,
        "model": run.model,
        "temperature": run.temperature,
        "language": run.language,
        "prompt_version": run.prompt_version,
        "rubric_version": run.rubric_version,
        "both_orders": run.both_orders,
        "structured_output": run.structured_output,
        "self_source": run.self_source.slug if run.self_source_id else None,
        "status": run.status,
        "calls": {
            "rated": calls.filter(status=JudgeCallStatus.OK).count(),
            "failed": calls.filter(status=JudgeCallStatus.FAILED).count(),
        },
        "figures": judge_figures(judge_inputs(run), rules_from_settings()),
    }
