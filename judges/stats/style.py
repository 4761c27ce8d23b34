"""Do models still beat the fans once style is accounted for? Per compared source and
metric, the paired difference (compared - reference) beside the same difference adjusted
for the two answers' difference in length (per 100 characters) and in emoji and kaomoji:
the intercept of a least-squares fit of the differences on those style differences, that
is the difference expected between two answers of the same length and decoration. For
the humans (cell and annotator clustered) and for the judge (cell clustered), on the pairs
the judge rated."""

import numpy as np

from annotation.stats.arrays import clean
from annotation.stats.minimum import enough_for_interval
from annotation.stats.rules import Rules
from annotation.stats.style import style_fit

from .inputs import JudgeInputs, Scores
from .intervals import NOT_ENOUGH, clustered_mean, enough


def _paired(scores: Scores, reference: int, metric: int, styles: dict):
    """Per verdict with the reference in it: (compared source, compared - reference,
    length difference / 100, decoration difference, cell, rater)."""
    scores = scores.where(scores.metric == metric)
    found: dict[tuple, dict] = {}
    for item, rater, order, source, value, cell, answer in zip(
        scores.item.tolist(), scores.rater.tolist(), scores.order.tolist(),
        scores.source.tolist(), scores.value.tolist(), scores.cell.tolist(),
        scores.answer.tolist(), strict=True,
    ):  # fmt: skip
        found.setdefault((item, rater, order, cell), {})[source] = (value, answer)
    rows = []
    for (_item, rater, _order, cell), values in found.items():
        if reference not in values or len(values) != 2:
            continue
        other = next(s for s in values if s != reference)
        (mine, mine_answer), (theirs, their_answer) = values[other], values[reference]
        length, decorated = styles.get(mine_answer, (0, 0))
        their_length, their_decorated = styles.get(their_answer, (0, 0))
        rows.append(
            (other, mine - theirs, (length - their_length) / 100, decorated - their_decorated,
             cell, rater)
        )  # fmt: skip
    return rows


def adjusted_difference(rows, rules: Rules, *, judge: bool) -> dict:
    """The mean difference, and the difference at equal length and decoration
    (`annotation.stats.style.style_fit`: the humans clustered by cell and annotator, a
    judge by cell alone)."""
    if not rows:
        return {"n": 0, "difference": None, "adjusted": None, "enough_data": False}
    table = np.array([r[1:] for r in rows], dtype=float)
    difference, length, decorated = table[:, 0], table[:, 1], table[:, 2]
    cell, rater = table[:, 3].astype(np.int64), table[:, 4].astype(np.int64)
    unadjusted = clustered_mean(difference, cell, rater, rules, judge=judge)
    fit = style_fit(
        difference, length, decorated, cell, None if judge else rater, confidence=rules.confidence
    )
    if fit is None:
        return {**_renamed(unadjusted), "adjusted": None, "enough_data": False}
    ok = enough_for_interval(
        enough(len(rows), len(np.unique(rater)), rules, judge=judge), fit.ci_low, fit.ci_high
    )
    return {
        **_renamed(unadjusted),
        "adjusted": clean(fit.adjusted),
        "adjusted_ci_low": clean(fit.ci_low) if ok else None,
        "adjusted_ci_high": clean(fit.ci_high) if ok else None,
        "per_100_characters": clean(fit.per_100_characters),
        "enough_data": bool(ok),
    }


def _renamed(mean: dict) -> dict:
    return {
        "n": mean["n"],
        "difference": mean["mean"],
        "ci_low": mean["ci_low"],
        "ci_high": mean["ci_high"],
    }


def style_figures(inputs: JudgeInputs, rules: Rules) -> dict:
    if inputs.reference is None:
        return {"enough_data": False, "note": "no reference source", "rows": []}
    human_scores = inputs.human_scores.where(
        np.isin(inputs.human_scores.item, np.unique(inputs.judge_scores.item))
    )
    rows = []
    for metric, slug in inputs.metrics.items():
        judged = _paired(inputs.judge_scores, inputs.reference, metric, inputs.answer_styles)
        rated = _paired(human_scores, inputs.reference, metric, inputs.answer_styles)
        for source in sorted({r[0] for r in judged}, key=lambda s: inputs.sources.get(s, "")):
            rows.append(
                {
                    "source": inputs.sources.get(source),
                    "metric": slug,
                    "humans": adjusted_difference(
                        [r for r in rated if r[0] == source], rules, judge=False
                    ),
                    "judge": adjusted_difference(
                        [r for r in judged if r[0] == source], rules, judge=True
                    ),
                }
            )
    return {"rows": rows, "note": "" if len(human_scores) else NOT_ENOUGH}
