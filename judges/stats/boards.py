"""The judge's leaderboard beside the humans' (on the same pairs), the rank correlation
of the sources between the two with a cell-bootstrap interval, and whether the study's
headline (which sources beat the reference source, on which metrics) holds under the
judge: per compared source and metric, the paired difference (compared - reference) with
its interval and the verdict it supports, for the humans and for the judge."""

import math

import numpy as np

from annotation.stats.arrays import clean
from annotation.stats.rules import Rules

from .inputs import JudgeInputs, Scores
from .intervals import NOT_ENOUGH, cell_bootstrap, clustered_mean, percentile_interval

# A rank correlation of n untied sources takes few values (4 for 3 sources, 11 for 4, 21
# for 5), and its bootstrap draws fewer still: their percentiles collapse onto those few
# values, and a bound lands on the estimate itself ("0.40 [0.40, 1.00]"), as if nothing lay
# beyond it. Below this many sources, or wherever a bound sits on the estimate short of -1
# or 1, the interval rests on too few values to be read.
MIN_RANKED_SOURCES = 5


def rests_on_few_values(rank: dict, sources: int | None) -> bool:
    """Whether a rank correlation's bootstrap interval rests on too few values (above).
    Takes the stored figures, so that runs computed before the rule read by it too."""
    if sources is not None and sources < MIN_RANKED_SOURCES:
        return True
    rho, low, high = rank.get("spearman"), rank.get("ci_low"), rank.get("ci_high")
    if rho is None or low is None or high is None:
        return False
    return (math.isclose(low, rho, abs_tol=1e-9) and rho > -1) or (
        math.isclose(high, rho, abs_tol=1e-9) and rho < 1
    )


def _source_means(scores: Scores, sources: np.ndarray) -> np.ndarray:
    position = np.searchsorted(sources, scores.source)
    total = np.bincount(position, weights=scores.value, minlength=len(sources))
    count = np.bincount(position, minlength=len(sources))
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def _ranks(rows: np.ndarray) -> np.ndarray:
    """0-based ranks within each row, tied values sharing their mean rank (Spearman's
    rule). Ranked by position, ties would follow how the sources are numbered (ids in the
    database, first appearance in a snapshot): a bootstrap draw in which two sources tie
    would give `reproduce` another correlation than the one published."""
    rows = np.asarray(rows, dtype=float)
    below = (rows[:, None, :] < rows[:, :, None]).sum(axis=2)
    equal = (rows[:, None, :] == rows[:, :, None]).sum(axis=2)
    return below + (equal - 1) / 2


def _spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ra, rb = _ranks(a), _ranks(b)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (ra * rb).sum(axis=1) / np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))


def leaderboards(inputs: JudgeInputs, rules: Rules) -> dict:
    """Rows by source slug: the figures never depend on how sources are numbered."""
    out = _leaderboards(inputs, rules)
    out["rows"].sort(key=lambda row: row["source"] or "")
    return out


def _leaderboards(inputs: JudgeInputs, rules: Rules) -> dict:
    judge = inputs.judge_scores
    human = inputs.human_scores.where(np.isin(inputs.human_scores.item, np.unique(judge.item)))
    sources = np.unique(judge.source)
    judge_means = _source_means(judge, sources)
    rows = [
        {"source": inputs.sources.get(int(s)), "judge": clean(m)}
        for s, m in zip(sources.tolist(), judge_means.tolist(), strict=True)
    ]
    out: dict = {"rows": rows}
    if len(human) == 0:
        out.update(rank_correlation=None, enough_data=False, note=NOT_ENOUGH)
        return out
    human_means = _source_means(human, sources)
    for row, mean in zip(rows, human_means.tolist(), strict=True):
        row["humans"] = clean(mean)
    rated = np.isfinite(human_means)
    if rated.sum() < 3:
        out.update(rank_correlation=None, enough_data=False, note=NOT_ENOUGH)
        return out
    sources = sources[rated]
    rho = float(_spearman(judge_means[rated][None], human_means[rated][None])[0])
    # Draws of cells: every rating of a taken cell, the judge's and the humans', with it.
    cell = np.concatenate([judge.cell, human.cell])
    dense, draws = cell_bootstrap(cell, rules)
    n_cells = draws.shape[1]

    def drawn_means(scores: Scores, cells: np.ndarray) -> np.ndarray:
        keep = np.isin(scores.source, sources)
        key = cells[keep] * len(sources) + np.searchsorted(sources, scores.source[keep])
        size = n_cells * len(sources)
        total = np.bincount(key, weights=scores.value[keep], minlength=size)
        count = np.bincount(key, minlength=size).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (draws @ total.reshape(n_cells, -1)) / (draws @ count.reshape(n_cells, -1))

    judge_draws = drawn_means(judge, dense[: len(judge)])
    human_draws = drawn_means(human, dense[len(judge) :])
    complete = np.isfinite(judge_draws).all(axis=1) & np.isfinite(human_draws).all(axis=1)
    spread = _spearman(judge_draws[complete], human_draws[complete])
    low, high = percentile_interval(
        np.where(np.isfinite(spread), spread, np.nan).tolist() + [np.nan] * int((~complete).sum()),
        rules,
    )
    rank = {"spearman": clean(rho), "ci_low": clean(low), "ci_high": clean(high)}
    rank.update(sources=len(sources), few_values=rests_on_few_values(rank, len(sources)))
    out.update(
        rank_correlation=rank,
        sources=len(sources),
        enough_data=True,
    )
    return out


def _differences(scores: Scores, reference: int, metric: int):
    """Per verdict (item, rater, order) with the reference source in it: (compared
    source, compared - reference, cell, rater)."""
    scores = scores.where(scores.metric == metric)
    found: dict[tuple, dict] = {}
    for item, rater, order, source, value, cell in zip(
        scores.item.tolist(), scores.rater.tolist(), scores.order.tolist(),
        scores.source.tolist(), scores.value.tolist(), scores.cell.tolist(), strict=True,
    ):  # fmt: skip
        found.setdefault((item, rater, order), {"cell": cell})[source] = value
    rows = []
    for (_item, rater, _order), values in found.items():
        cell = values.pop("cell")
        if reference in values and len(values) == 2:
            other = next(s for s in values if s != reference)
            rows.append((other, values[other] - values[reference], cell, rater))
    return rows


def _verdict(figure: dict) -> str:
    if not figure.get("enough_data") or figure.get("ci_low") is None:
        return NOT_ENOUGH
    if figure["ci_low"] > 0:
        return "beats"
    if figure["ci_high"] < 0:
        return "trails"
    return "unclear"


def headline(inputs: JudgeInputs, rules: Rules) -> dict:
    if inputs.reference is None:
        return {"enough_data": False, "note": "no reference source"}
    human_scores = inputs.human_scores.where(
        np.isin(inputs.human_scores.item, np.unique(inputs.judge_scores.item))
    )
    rows, agree, compared = [], 0, 0
    for metric, slug in inputs.metrics.items():
        judged = _differences(inputs.judge_scores, inputs.reference, metric)
        rated = _differences(human_scores, inputs.reference, metric)
        for source in sorted({r[0] for r in judged}, key=lambda s: inputs.sources.get(s, "")):
            figures = {}
            for who, found, is_judge in (("judge", judged, True), ("humans", rated, False)):
                mine = [r for r in found if r[0] == source]
                figures[who] = clustered_mean(
                    [r[1] for r in mine], [r[2] for r in mine], [r[3] for r in mine], rules,
                    judge=is_judge,
                )  # fmt: skip
                figures[who]["verdict"] = _verdict(figures[who])
            same = figures["judge"]["verdict"] == figures["humans"]["verdict"]
            if NOT_ENOUGH not in (figures["judge"]["verdict"], figures["humans"]["verdict"]):
                compared += 1
                agree += same
            rows.append({"source": inputs.sources.get(source), "metric": slug, **figures})
    return {
        "rows": rows,
        "verdicts_compared": compared,
        "verdicts_agreeing": agree,
        "holds": (agree == compared) if compared else None,
        "enough_data": compared > 0,
    }
