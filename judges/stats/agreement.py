"""How far the judge agrees with the humans, per metric: Krippendorff's ordinal alpha of
the human raters and with the judge added as one more rater, on the same answers; and the
correlation of the judge's score of each answer with the humans' mean score of it."""

import numpy as np

from annotation.stats.arrays import VALUES, clean
from annotation.stats.clustered import alpha_two_way
from annotation.stats.rules import Rules

from .inputs import JudgeInputs, Scores
from .intervals import NOT_ENOUGH, cell_bootstrap, percentile_interval, weighted_pearson


def _judge_rating_per_answer(judge: Scores) -> dict[int, tuple[int, int]]:
    """answer -> (value, cell) of the judge's first order (or the swapped one alone):
    one rating per rater and unit, as alpha wants."""
    chosen: dict[int, tuple[int, int, int]] = {}
    for answer, order, value, cell in zip(
        judge.answer.tolist(),
        judge.order.tolist(),
        judge.value.tolist(),
        judge.cell.tolist(),
        strict=True,
    ):
        if answer not in chosen or order < chosen[answer][0]:
            chosen[answer] = (order, value, cell)
    return {answer: (value, cell) for answer, (_o, value, cell) in chosen.items()}


def _alpha(unit, value, rater, cell, rules: Rules) -> dict:
    estimate = alpha_two_way(
        unit, np.asarray(value) - 1, rater, cell, VALUES, "ordinal", confidence=rules.confidence
    )
    return {
        "alpha": clean(estimate.alpha),
        "ci_low": clean(estimate.ci_low),
        "ci_high": clean(estimate.ci_high),
        "units": estimate.n_units,
    }


def alpha_with_judge(human: Scores, judge: Scores, rules: Rules) -> dict:
    """On the answers the judge rated and at least two humans rated: alpha of the humans,
    and alpha with the judge as one more rater (its first order's rating)."""
    judged = _judge_rating_per_answer(judge)
    in_judged = np.isin(human.answer, np.fromiter(judged, dtype=np.int64, count=len(judged)))
    human = human.where(in_judged)
    answers, counts = np.unique(human.answer, return_counts=True)
    shared = answers[counts >= 2]
    human = human.where(np.isin(human.answer, shared))
    if len(shared) == 0 or len(np.unique(human.rater)) < 2:
        return {"enough_data": False, "note": NOT_ENOUGH, "units": len(shared)}
    unit_of = {answer: i for i, answer in enumerate(shared.tolist())}
    unit = np.array([unit_of[a] for a in human.answer.tolist()], dtype=np.int64)
    humans = _alpha(unit, human.value, human.rater, human.cell, rules)
    judge_rater = int(human.rater.max()) + 1
    judge_unit = np.arange(len(shared), dtype=np.int64)
    judge_value = np.array([judged[a][0] for a in shared.tolist()], dtype=np.int64)
    judge_cell = np.array([judged[a][1] for a in shared.tolist()], dtype=np.int64)
    with_judge = _alpha(
        np.concatenate([unit, judge_unit]),
        np.concatenate([human.value, judge_value]),
        np.concatenate([human.rater, np.full(len(shared), judge_rater)]),
        np.concatenate([human.cell, judge_cell]),
        rules,
    )
    enough = len(np.unique(human.rater)) >= rules.min_annotators and len(shared) >= (
        rules.min_judgments
    )
    return {
        "humans": humans,
        "with_judge": with_judge,
        "difference": clean(
            (with_judge["alpha"] - humans["alpha"])
            if with_judge["alpha"] is not None and humans["alpha"] is not None
            else float("nan")
        ),
        "enough_data": bool(enough),
        "units": len(shared),
    }


def score_correlation(human: Scores, judge: Scores, rules: Rules) -> dict:
    """Pearson's r between the judge's score of an answer (mean over its orders) and the
    humans' mean score of it, over the answers both rated; a cell-bootstrap interval."""
    if len(human) == 0 or len(judge) == 0:
        return {"enough_data": False, "note": NOT_ENOUGH, "n": 0, "r": None}
    both = np.intersect1d(np.unique(human.answer), np.unique(judge.answer))
    if len(both) < 3:
        return {"enough_data": False, "note": NOT_ENOUGH, "n": len(both), "r": None}

    def means(scores: Scores):
        keep = np.isin(scores.answer, both)
        position = np.searchsorted(both, scores.answer[keep])
        total = np.bincount(position, weights=scores.value[keep], minlength=len(both))
        count = np.bincount(position, minlength=len(both))
        return total / count

    judge_mean, human_mean = means(judge), means(human)
    cell_of = dict(zip(judge.answer.tolist(), judge.cell.tolist(), strict=False))
    cell = np.array([cell_of[a] for a in both.tolist()], dtype=np.int64)
    r = float(weighted_pearson(judge_mean, human_mean, np.ones(len(both)))[0])
    dense, draws = cell_bootstrap(cell, rules)
    low, high = percentile_interval(
        weighted_pearson(judge_mean, human_mean, draws[:, dense]), rules
    )
    annotators = len(np.unique(human.rater[np.isin(human.answer, both)]))
    enough = len(both) >= rules.min_judgments and annotators >= rules.min_annotators
    if not np.isfinite(r):
        return {
            "enough_data": False,
            "note": "no variation in the scores",
            "n": len(both),
            "r": None,
        }
    return {
        "n": len(both),
        "r": clean(r),
        "ci_low": clean(low) if enough else None,
        "ci_high": clean(high) if enough else None,
        "enough_data": bool(enough),
    }


def agreement_figures(inputs: JudgeInputs, rules: Rules) -> dict:
    """Per metric and over all metrics (scores averaged per answer for the correlation)."""
    out = {}
    for metric, slug in inputs.metrics.items():
        human = inputs.human_scores.where(inputs.human_scores.metric == metric)
        judge = inputs.judge_scores.where(inputs.judge_scores.metric == metric)
        out[slug] = {
            "alpha": alpha_with_judge(human, judge, rules),
            "correlation": score_correlation(human, judge, rules),
        }
    out["overall"] = {
        "correlation": score_correlation(inputs.human_scores, inputs.judge_scores, rules)
    }
    return out
