"""How far the judge agrees with the humans, per metric: Krippendorff's ordinal alpha of
the human raters and with the judge added as one more rater, on the same units (an answer
within its pair); and the correlation of the judge's score of each answer with the
humans' mean score of it."""

import numpy as np

from annotation.stats.arrays import VALUES, agreement_unit, clean
from annotation.stats.clustered import alpha_two_way
from annotation.stats.rules import Rules

from .inputs import JudgeInputs, Scores
from .intervals import NOT_ENOUGH, cell_bootstrap, percentile_interval, weighted_pearson


def _unit_keys(scores: Scores) -> np.ndarray:
    """A unit of agreement is one answer within one pair, as in the study's own agreement."""
    return agreement_unit(scores.item, scores.answer)


def _judge_rating_per_unit(judge: Scores) -> dict[int, tuple[int, int]]:
    """(item, answer) unit -> (value, cell) of the judge's first order on that pair (or the
    swapped one alone): one rating per rater and unit, as alpha wants. A judge makes one
    call per pair and order, so the choice never depends on the order of the rows; keyed
    by the answer alone, the same answer judged in another pair made it depend on which
    row came first (the database's order or the snapshot's)."""
    chosen: dict[int, tuple[int, int, int]] = {}
    for unit, order, value, cell in zip(
        _unit_keys(judge).tolist(),
        judge.order.tolist(),
        judge.value.tolist(),
        judge.cell.tolist(),
        strict=True,
    ):
        if unit not in chosen or order < chosen[unit][0]:
            chosen[unit] = (order, value, cell)
    return {unit: (value, cell) for unit, (_o, value, cell) in chosen.items()}


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
    """On the units (answers within their pairs) the judge rated and at least two humans
    rated: alpha of the humans, and alpha with the judge as one more rater (its first
    order's rating)."""
    judged = _judge_rating_per_unit(judge)
    human_units = _unit_keys(human)
    in_judged = np.isin(human_units, np.fromiter(judged, dtype=np.int64, count=len(judged)))
    human, human_units = human.where(in_judged), human_units[in_judged]
    keys, counts = np.unique(human_units, return_counts=True)
    shared = keys[counts >= 2]
    in_shared = np.isin(human_units, shared)
    human, human_units = human.where(in_shared), human_units[in_shared]
    if len(shared) == 0 or len(np.unique(human.rater)) < 2:
        return {"enough_data": False, "note": NOT_ENOUGH, "units": len(shared)}
    unit = np.searchsorted(shared, human_units)
    humans = _alpha(unit, human.value, human.rater, human.cell, rules)
    judge_rater = int(human.rater.max()) + 1
    judge_unit = np.arange(len(shared), dtype=np.int64)
    judge_value = np.array([judged[key][0] for key in shared.tolist()], dtype=np.int64)
    judge_cell = np.array([judged[key][1] for key in shared.tolist()], dtype=np.int64)
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


def _units(scores: Scores) -> np.ndarray:
    """One key per (answer, metric)."""
    return scores.answer * 1000 + scores.metric


def extra_fan(human: Scores, judge: Scores, rules: Rules) -> dict:
    """Is the judge as good as one more fan? On the (answer, metric) units with two or
    more human ratings and the judge's: the mean distance |judge - fan| over every fan of
    a unit, beside the mean distance |fan - fan| over every two fans of it; their
    difference (negative: the judge is closer to a fan than fans are to each other) with
    a cell-bootstrap interval. The judge's rating of a unit is the mean over its orders."""
    if len(human) == 0 or len(judge) == 0:
        return {"enough_data": False, "note": NOT_ENOUGH}
    units, position = np.unique(_units(human), return_inverse=True)
    judged_units, judged_position = np.unique(_units(judge), return_inverse=True)
    judged_value = np.bincount(judged_position, weights=judge.value) / np.bincount(judged_position)
    where = np.searchsorted(judged_units, units)
    found = (where < len(judged_units)) & (
        judged_units[np.minimum(where, len(judged_units) - 1)] == units
    )
    judge_of_unit = np.where(found, judged_value[np.minimum(where, len(judged_units) - 1)], np.nan)
    ratings = np.bincount(position, minlength=len(units))
    keep_unit = found & (ratings >= 2)
    if keep_unit.sum() == 0:
        return {"enough_data": False, "note": NOT_ENOUGH}
    keep = keep_unit[position]
    position, value, cell = position[keep], human.value[keep].astype(float), human.cell[keep]
    to_judge = np.bincount(
        position, weights=np.abs(value - judge_of_unit[position]), minlength=len(units)
    )
    # Sum over every two fans of a unit of |a - b|: from each unit's sorted values.
    order = np.lexsort((value, position))
    position, value, cell = position[order], value[order], cell[order]
    rank = np.arange(len(position)) - np.searchsorted(position, position)
    count = ratings[position]
    to_fans = np.bincount(position, weights=value * (2 * rank - count + 1), minlength=len(units))
    n_judge = np.where(keep_unit, ratings, 0).astype(float)
    n_fans = n_judge * (n_judge - 1) / 2
    cell_of_unit = np.zeros(len(units), dtype=np.int64)
    cell_of_unit[position] = cell
    dense, draws = cell_bootstrap(cell_of_unit[keep_unit], rules)
    cells = draws.shape[1]

    def per_cell(weights):
        return np.bincount(dense, weights=weights[keep_unit], minlength=cells)

    sums = [per_cell(w) for w in (to_judge, n_judge, to_fans, n_fans)]
    judge_distance = sums[0].sum() / sums[1].sum()
    fan_distance = sums[2].sum() / sums[3].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        drawn = (draws @ sums[0]) / (draws @ sums[1]) - (draws @ sums[2]) / (draws @ sums[3])
    low, high = percentile_interval(drawn, rules)
    annotators = len(np.unique(human.rater[keep]))
    enough = int(keep_unit.sum()) >= rules.min_judgments and annotators >= rules.min_annotators
    return {
        "units": int(keep_unit.sum()),
        "judge_to_fan": clean(judge_distance),
        "fan_to_fan": clean(fan_distance),
        "difference": clean(judge_distance - fan_distance),
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
            "extra_fan": extra_fan(human, judge, rules),
        }
    out["overall"] = {
        "correlation": score_correlation(inputs.human_scores, inputs.judge_scores, rules),
        "extra_fan": extra_fan(inputs.human_scores, inputs.judge_scores, rules),
    }
    return out
