"""The judge's biases beside the humans': position (how often the preferred answer is
the left one, and with both orders how often the same side wins both times), length (how
often the longer answer is preferred, and the slope of the score difference on the
length difference) and self-preference (how often answers of the judge's own model
family are preferred, against the humans' preference on the same pairs)."""

from typing import Any

import numpy as np

from annotation.stats.arrays import clean
from annotation.stats.rules import Rules

from .inputs import LEFT, RIGHT, TIE, JudgeInputs, Verdicts
from .intervals import NOT_ENOUGH, cell_bootstrap, clustered_slope, percentile_interval, share

HUNDRED_CHARACTERS = 100.0


def left_rate(verdicts: Verdicts, rules: Rules, *, judge: bool) -> dict:
    decided = verdicts.where(verdicts.preferred != TIE)
    return share(decided.preferred == LEFT, decided.cell, decided.rater, rules, judge=judge)


def same_side_both_orders(verdicts: Verdicts, rules: Rules) -> dict:
    """Over the pairs decided in both orders: how often the same side won both times
    (a judge that reads the answers never does; one that follows the side always)."""
    decided = verdicts.where(verdicts.preferred != TIE)
    by_item: dict[int, dict[int, tuple[int, int]]] = {}
    for item, order, preferred, cell in zip(
        decided.item.tolist(),
        decided.order.tolist(),
        decided.preferred.tolist(),
        decided.cell.tolist(),
        strict=True,
    ):
        by_item.setdefault(item, {})[order] = (preferred, cell)
    pairs = [orders for orders in by_item.values() if len(orders) == 2]
    followed = np.array([o[1][0] == o[2][0] for o in pairs], dtype=float)
    cell = np.array([o[1][1] for o in pairs], dtype=np.int64)
    return share(followed, cell, np.zeros(len(pairs), dtype=np.int64), rules, judge=True)


def longer_preferred(verdicts: Verdicts, rules: Rules, *, judge: bool) -> dict:
    keep = (verdicts.preferred != TIE) & (verdicts.left_length != verdicts.right_length)
    decided = verdicts.where(keep)
    left_longer = decided.left_length > decided.right_length
    chose_longer = np.where(decided.preferred == LEFT, left_longer, ~left_longer)
    return share(chose_longer, decided.cell, decided.rater, rules, judge=judge)


def length_slope(verdicts: Verdicts, rules: Rules, *, judge: bool) -> dict:
    """Score difference (left - right, mean over metrics) per 100 characters of length
    difference; the intercept takes up any side effect."""
    keep = np.isfinite(verdicts.left_score) & np.isfinite(verdicts.right_score)
    rated = verdicts.where(keep)
    x = (rated.left_length - rated.right_length) / HUNDRED_CHARACTERS
    y = rated.left_score - rated.right_score
    return clustered_slope(x, y, rated.cell, rated.rater, rules, judge=judge)


def _self_outcomes(verdicts: Verdicts, source: int) -> Verdicts:
    involved = (verdicts.left_source == source) | (verdicts.right_source == source)
    return verdicts.where(involved & (verdicts.preferred != TIE))


def _chose(verdicts: Verdicts, source: int) -> np.ndarray:
    preferred_source = np.where(
        verdicts.preferred == RIGHT, verdicts.right_source, verdicts.left_source
    )
    return preferred_source == source


def self_preference(inputs: JudgeInputs, rules: Rules) -> dict:
    """How often the judge prefers its own family's answers, how often the humans do on
    the same pairs, and the difference with a cell-bootstrap interval."""
    source = inputs.self_source
    if source is None:
        return {"enough_data": False, "note": "no self source named for this judge"}
    judge = _self_outcomes(inputs.judge_verdicts, source)
    items = np.unique(judge.item)
    human = _self_outcomes(inputs.human_verdicts, source)
    human = human.where(np.isin(human.item, items))
    judge_chose, human_chose = _chose(judge, source), _chose(human, source)
    out: dict[str, Any] = {
        "source": inputs.sources.get(source),
        "judge": share(judge_chose, judge.cell, judge.rater, rules, judge=True),
        "humans": share(human_chose, human.cell, human.rater, rules, judge=False),
    }
    if len(human) == 0:
        out.update(difference=None, ci_low=None, ci_high=None, enough_data=False, note=NOT_ENOUGH)
        return out
    cell = np.concatenate([judge.cell, human.cell])
    dense, draws = cell_bootstrap(cell, rules)
    judge_cell, human_cell = dense[: len(judge)], dense[len(judge) :]
    cells = draws.shape[1]

    def rates(chose, where):
        successes = np.bincount(where, weights=chose.astype(float), minlength=cells)
        counts = np.bincount(where, minlength=cells).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (draws @ successes) / (draws @ counts)

    difference = float(judge_chose.mean() - human_chose.mean())
    low, high = percentile_interval(
        rates(judge_chose, judge_cell) - rates(human_chose, human_cell), rules
    )
    enough = out["judge"]["enough_data"] and out["humans"]["enough_data"]
    out.update(
        difference=clean(difference),
        ci_low=clean(low) if enough else None,
        ci_high=clean(high) if enough else None,
        enough_data=bool(enough),
    )
    return out


def bias_figures(inputs: JudgeInputs, rules: Rules) -> dict:
    judge, humans = inputs.judge_verdicts, inputs.human_verdicts
    # The humans on the pairs the judge rated, so the two sides of each figure compare
    # the same answers.
    humans = humans.where(np.isin(humans.item, np.unique(judge.item)))
    return {
        "position": {
            "judge": left_rate(judge, rules, judge=True),
            "judge_same_side_both_orders": same_side_both_orders(judge, rules),
            "humans": left_rate(humans, rules, judge=False),
        },
        "length": {
            "judge_longer_preferred": longer_preferred(judge, rules, judge=True),
            "humans_longer_preferred": longer_preferred(humans, rules, judge=False),
            "judge_slope": length_slope(judge, rules, judge=True),
            "humans_slope": length_slope(humans, rules, judge=False),
        },
        "self_preference": self_preference(inputs, rules),
    }
