"""ICC(1,k) of a study's ratings with the two-way (cells, annotators) cluster-robust
interval alpha has (`clustered`): its delete-one-cluster terms and generalized interval,
from left-out estimates stepped to the study's own number of ratings per unit."""

import numpy as np

from .agreement import AlphaEstimate
from .clustered import cr2_jackknife_variance, dense_codes, generalized_half_width


def _icc_from_totals(units, n, squares_of_sums, total, squares):
    """ICC(1,k) from totals over pairable units: how many, their ratings, the sum over
    units of (sum of ratings)^2 / ratings, the sum of ratings and of their squares."""
    with np.errstate(invalid="ignore", divide="ignore"):
        between = (squares_of_sums - total**2 / n) / (units - 1)
        within = (squares - squares_of_sums) / (n - units)
        return np.where((units >= 2) & (n > units) & (between != 0), 1 - within / between, np.nan)


def _ratings_per_unit(units, n, squared_sizes):
    """The one-way ANOVA's k0, the ratings per unit of an unbalanced design: ICC(1,k)
    is the single-rating ICC(1) stepped up to k0 ratings by Spearman-Brown."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (n - squared_sizes / n) / (units - 1)


def _icc_at(k0, units, n, squares_of_sums, total, squares, squared_sizes):
    """ICC(1,k) for k0 ratings per unit from totals (as `_icc_from_totals`, with the sum
    over units of their ratings squared): the totals' own ICC(1), stepped up to k0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        between = (squares_of_sums - total**2 / n) / (units - 1)
        within = (squares - squares_of_sums) / (n - units)
        own_k0 = _ratings_per_unit(units, n, squared_sizes)
        single = (between - within) / (between + (own_k0 - 1) * within)
        stepped = k0 * single / (1 + (k0 - 1) * single)
        return np.where((units >= 2) & (n > units) & (between != 0), stepped, np.nan)


def icc_two_way(unit, value, annotator, cell, *, confidence: float = 0.95) -> AlphaEstimate:
    """ICC(1,k) (as `agreement.icc_1k`) with a two-way (cells, annotators)
    cluster-robust interval, built as alpha's (`alpha_interval`): each one-way variance
    a CR2-weighted delete-one-cluster jackknife, and the generalized interval of their
    sum minus the intersection's.

    With annotators assigned to items at random, the one-way estimator targets the same
    agreement of the mean of k ratings as the two-way random-effects ICC(A,k) (McGraw
    and Wong 1996): annotators' leniency is part of the within-unit spread. What the
    one-way F-based interval would get wrong is that units share annotators and cells;
    the clustered jackknife does not assume they are independent. ICC depends on the
    ratings only through a few totals, so leaving a cluster out subtracts what its
    ratings add to them (a unit left with one rating drops out).

    ICC(1,k) grows with k, and leaving an annotator out takes a rating from each unit
    they rated: the estimate without them is of fewer ratings per unit, lower for that
    reason alone, and most so for an annotator who did much of the work. So each
    left-out estimate is the single-rating ICC(1) of what is left, stepped up to the
    full study's ratings per unit (Spearman-Brown): the same quantity as the estimate,
    with only the sample changed. Without that step the spread of the left-out
    estimates measured how unequal the workloads were, and intervals covered 98-99 %
    with skewed workloads (bench/README.md)."""
    value = np.asarray(value, dtype=float)
    unit, annotator, cell = (np.asarray(a, dtype=np.int64) for a in (unit, annotator, cell))
    nan = float("nan")
    if len(unit) == 0:
        return AlphaEstimate(nan, nan, nan, 0)
    _u, unit = dense_codes(unit)
    m = np.bincount(unit).astype(float)
    s = np.bincount(unit, weights=value)
    q = np.bincount(unit, weights=value**2)
    pairable = m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(pairable, s**2 / m, 0.0)
    # What each unit adds to the six totals, and what it adds without one rating.
    unit_totals = np.stack(
        [pairable * 1.0, pairable * m, share, pairable * s, pairable * q, pairable * m**2]
    )
    totals = unit_totals.sum(axis=1)
    icc = float(_icc_from_totals(*totals[:5]))
    if not np.isfinite(icc):
        return AlphaEstimate(icc, nan, nan, int(pairable.sum()))
    k0 = _ratings_per_unit(totals[0], totals[1], totals[5])
    rest_m, rest_s = m[unit] - 1, s[unit] - value
    kept = rest_m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        rest_share = np.where(kept, rest_s**2 / rest_m, 0.0)
    rest_totals = np.stack(
        [
            kept * 1.0,
            kept * rest_m,
            rest_share,
            kept * rest_s,
            kept * (q[unit] - value**2),
            kept * rest_m**2,
        ]
    )
    taken = unit_totals[:, unit] - rest_totals  # per rating: what leaving it out removes

    _c, cell = dense_codes(cell)
    _a, annotator = dense_codes(annotator)
    _b, both = dense_codes(cell * (int(annotator.max()) + 1) + annotator)
    cell_of_unit = np.zeros(len(m), dtype=np.int64)
    cell_of_unit[unit] = cell
    terms = []
    for members, removed, weights in (
        (cell_of_unit, unit_totals, m),  # a cell's units leave whole, with their ratings
        (annotator, taken, None),
        (both, taken, None),
    ):
        clusters = int(members.max()) + 1
        left = totals[:, None] - np.stack(
            [np.bincount(members, weights=row, minlength=clusters) for row in removed]
        )
        ratings = np.bincount(members, weights=weights, minlength=clusters)
        terms.append(cr2_jackknife_variance(_icc_at(k0, *left), icc, ratings))
    half = generalized_half_width(terms, confidence)
    if not np.isfinite(half):
        return AlphaEstimate(icc, nan, nan, int(pairable.sum()))
    return AlphaEstimate(icc, icc - half, min(icc + half, 1.0), int(pairable.sum()))
