"""Intervals for the judge figures: cluster-robust ones from `annotation.stats` where they
fit (proportions), and the few this comparison adds: a cluster-robust slope and mean, and
a cell bootstrap for figures that pair the judge with the humans (a correlation, a
difference of shares, a rank correlation). A judge is one rater: its intervals are
clustered by cell (character x scenario) alone; the humans' by cell and annotator."""

import numpy as np

from annotation.stats.arrays import clean, cluster_resampling, index_of
from annotation.stats.intervals import clustered_proportions, t_quantile
from annotation.stats.minimum import enough_for_interval
from annotation.stats.rules import Rules

NOT_ENOUGH = "not enough data"


def _dense(values) -> np.ndarray:
    values = np.asarray(values, dtype=np.int64)
    if len(values) == 0:
        return values
    return index_of(values - values.min())[1]


def enough(n: int, raters: int, rules: Rules, *, judge: bool) -> bool:
    """The study's minimum information: judgments, and for humans annotators too."""
    return n >= rules.min_judgments and (judge or raters >= rules.min_annotators)


def share(outcome, cell, rater, rules: Rules, *, judge: bool) -> dict:
    """A 0/1 outcome's rate with the study's clustered Wilson interval."""
    outcome = np.asarray(outcome, dtype=float)
    n = len(outcome)
    if n == 0:
        return {"n": 0, "rate": None, "ci_low": None, "ci_high": None, "enough_data": False}
    raters = len(np.unique(rater))
    successes, _n, deff, low, high = clustered_proportions(
        outcome,
        np.zeros(n, dtype=np.int64),
        _dense(cell),
        _dense(rater),
        1,
        confidence=rules.confidence,
    )[0]
    ok = bool(enough_for_interval(enough(n, raters, rules, judge=judge), low, high))
    return {
        "n": n,
        "count": int(successes),
        "rate": clean(successes / n),
        "ci_low": clean(low) if ok else None,
        "ci_high": clean(high) if ok else None,
        "design_effect": clean(deff),
        "raters": raters,
        "enough_data": ok,
    }


def _robust_variance(influence, cell, rater, *, judge: bool) -> tuple[float, float]:
    """(variance, degrees of freedom) of a sum of influences: CR1 by cell for a judge;
    for humans two-way (cell + annotator - both), or the larger one-way term when that
    is not positive (Cameron, Gelbach and Miller 2011)."""

    def one_way(cluster) -> tuple[float, int]:
        dense = _dense(cluster)
        sums = np.bincount(dense, weights=influence)
        clusters = len(sums)
        if clusters < 2:
            return float("nan"), clusters
        return clusters / (clusters - 1) * float((sums**2).sum()), clusters

    v_cell, cells = one_way(cell)
    if judge:
        return v_cell, cells - 1
    v_rater, raters = one_way(rater)
    v_both, _ = one_way(np.asarray(cell) * (int(np.max(rater)) + 1) + np.asarray(rater))
    variance = v_cell + v_rater - v_both
    if not variance > 0:
        variance = max(v_cell, v_rater)
    return variance, min(cells, raters) - 1


def _interval(point: float, variance: float, df: float, rules: Rules) -> tuple[float, float]:
    if not (df >= 1 and np.isfinite(variance)):
        return float("nan"), float("nan")
    half = float(t_quantile(df, rules.confidence)) * float(np.sqrt(variance))
    return point - half, point + half


def clustered_mean(values, cell, rater, rules: Rules, *, judge: bool) -> dict:
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None, "enough_data": False}
    mean = float(values.mean())
    variance, df = _robust_variance((values - mean) / n, cell, rater, judge=judge)
    low, high = _interval(mean, variance, df, rules)
    ok = bool(enough_for_interval(enough(n, len(np.unique(rater)), rules, judge=judge), low, high))
    return {
        "n": n,
        "mean": clean(mean),
        "ci_low": clean(low) if ok else None,
        "ci_high": clean(high) if ok else None,
        "enough_data": ok,
    }


def clustered_slope(x, y, cell, rater, rules: Rules, *, judge: bool) -> dict:
    """The least-squares slope of y on x (with an intercept) and its cluster-robust t
    interval."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    centred = x - x.mean() if n else x
    sxx = float((centred**2).sum())
    if n < 3 or sxx == 0:
        return {"n": n, "slope": None, "ci_low": None, "ci_high": None, "enough_data": False}
    slope = float((centred * (y - y.mean())).sum() / sxx)
    residual = y - y.mean() - slope * centred
    variance, df = _robust_variance(centred * residual / sxx, cell, rater, judge=judge)
    low, high = _interval(slope, variance, df, rules)
    ok = bool(enough_for_interval(enough(n, len(np.unique(rater)), rules, judge=judge), low, high))
    return {
        "n": n,
        "slope": clean(slope),
        "ci_low": clean(low) if ok else None,
        "ci_high": clean(high) if ok else None,
        "enough_data": ok,
    }


def cell_bootstrap(cell, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(dense cell index per element, draws x cells resampling counts): each draw takes
    the cells with replacement, every element of a taken cell with it."""
    dense = _dense(cell)
    clusters = int(dense.max()) + 1 if len(dense) else 0
    return dense, cluster_resampling(clusters, rules.draws, rules.seed)


def percentile_interval(draws, rules: Rules) -> tuple[float, float]:
    draws = np.asarray(draws, dtype=float)
    draws = draws[np.isfinite(draws)]
    if len(draws) < 0.9 * rules.draws:
        # Too many draws without a figure (a cell set without variation): no interval.
        return float("nan"), float("nan")
    tail = (1 - rules.confidence) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def weighted_pearson(x, y, weights) -> np.ndarray:
    """Pearson's r per row of `weights` (draws x elements); NaN where undefined."""
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = weights @ x / total
        my = weights @ y / total
        dx = x[None, :] - mx[:, None]
        dy = y[None, :] - my[:, None]
        cov = (weights * dx * dy).sum(axis=1)
        vx = (weights * dx * dx).sum(axis=1)
        vy = (weights * dy * dy).sum(axis=1)
        return cov / np.sqrt(vx * vy)
