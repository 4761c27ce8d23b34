"""Two-way cluster-robust intervals for Krippendorff's alpha, ICC and Bradley-Terry strengths.

Ratings cluster within character x scenario cells and within annotators, and both recur
across the study. An interval that resamples cells only leaves out the uncertainty of
which annotators took part: with a few dozen annotators who differ in leniency or taste
it is too narrow. Resampling cells and annotators independently (the "pigeonhole"
bootstrap) counts the rating-level noise twice and is too wide (see `intervals`).

So these figures get the two-way variance of the means in `intervals`,
V = V_cells + V_annotators - V_intersection (Cameron, Gelbach and Miller 2011), each
term a one-way clustered variance. Closed forms (quadrature aside): no draws, exact to
reproduce, and cheap at a million ratings.

- Alpha: each one-way variance is a delete-one-cluster jackknife (leave out a cell, an
  annotator, or one annotator's ratings in one cell, and recompute alpha from the
  coincidence matrix minus what they contributed), each cluster's squared change weighted
  by one minus its share of the ratings, which for a mean is CR2 exactly
  (`cr2_jackknife_variance`). Alpha sums over pairs of ratings of a unit, and a pair has
  two annotators; leaving an annotator out removes every pair it is in, which a
  linearisation rating by rating would get wrong. It also means that the annotator and the
  intersection terms both carry the pairs' rating-level noise (leaving a rating out removes
  its pairs and reweighs the unit's remaining one) and cancel it only in expectation: V is
  unbiased, but far less precise than t on the number of annotators assumes (in the crowds
  of `bench/coverage.py` a Satterthwaite count of its degrees of freedom is about 5 at 10
  annotators and 14 at 40, not 9 and 39; that t interval covered 93-94 %). The interval is
  therefore the generalized (fiducial) one of the sum, each term as uncertain as its own
  effective number of clusters makes it (`intervals.fiducial_half_width`; one term: t).
- ICC(1,k): alpha's terms and interval, from left-out estimates of the same number of
  ratings per unit as the study's (`icc.icc_two_way`).
- Bradley-Terry: the sandwich. Each comparison's influence on the centred strengths is
  H^-1 times its score; per source the influences are clustered as means are, with the
  means' t quantile.
"""

from dataclasses import dataclass

import numpy as np

from .agreement import (
    AlphaEstimate,
    alpha_batch,
    counts_from_ratings,
    pattern_coincidences,
)
from .intervals import (
    effective_clusters,
    fiducial_half_width,
    t_quantile,
    two_way_cluster_means,
)


def cr2_jackknife_variance(without, estimate: float, sizes) -> tuple[float, float]:
    """One one-way variance of alpha and the effective number of clusters behind it: the sum
    over clusters of (1 - h_g) (alpha without cluster g - alpha)^2, h_g the cluster's share of
    the ratings. For a mean, alpha without g minus alpha is -e_g / (n (1 - h_g)) (e_g the
    cluster's summed residuals), so each share is e_g^2 / (n^2 (1 - h_g)): CR2 exactly, the
    variance the means use (`intervals._cluster_term`). With equal clusters it is the usual
    jackknife's (G - 1) / G; the plain jackknife's 1 / (1 - h_g)^2 would overstate what a
    large cluster contributes (CR3). Clusters whose removal leaves alpha undefined drop out."""
    sizes = np.asarray(sizes, dtype=float)
    share = sizes / sizes.sum()
    finite = np.isfinite(without)
    if finite.sum() < 2:
        return float("nan"), float("nan")
    shares = (1 - share[finite]) * (without[finite] - estimate) ** 2
    sizes = sizes[finite]
    m1, m2, m3, m4 = (np.sum(sizes**k) for k in (1, 2, 3, 4))
    effective = effective_clusters(m1, m2, m3, m4, shares.sum(), (sizes * shares).sum())
    return float(shares.sum()), float(effective)


def _sums_by(key, matrices) -> np.ndarray:
    """Sum of the V x V `matrices` per distinct key: one bincount over (key, entry)."""
    _present, key = dense_codes(key)
    entries = matrices.shape[1] * matrices.shape[2]
    flat = np.bincount(
        (key[:, None] * entries + np.arange(entries)).ravel(),
        weights=matrices.reshape(len(matrices), entries).ravel(),
        minlength=(int(key.max()) + 1) * entries,
    )
    return flat.reshape(-1, *matrices.shape[1:])


def _sums_of_kinds(cluster, kind, table) -> np.ndarray:
    """Per cluster (0-based, dense), the sum of `table[kind]` over its members: a count
    of each kind per cluster times the table, unless that count table would be large."""
    n_clusters, n_kinds = int(cluster.max()) + 1, len(table)
    if n_clusters * n_kinds > 16_000_000:
        return _sums_by(cluster, table[kind])
    tally = np.bincount(cluster * n_kinds + kind, minlength=n_clusters * n_kinds)
    sums = tally.reshape(n_clusters, n_kinds).astype(float) @ table.reshape(n_kinds, -1)
    return sums.reshape(n_clusters, *table.shape[1:])


# A random 64-bit number per kind of member: a cluster's sum of them names its mix of
# kinds (a collision is a 1 in 2^64 event), so that alpha is recomputed once per mix.
_KIND_HASH = np.random.default_rng(20251123).integers(0, 2**63, size=4096, dtype=np.int64)


def _left_out_alphas(cluster, kind, table, coincidences, values, level) -> np.ndarray:
    """Alpha with each cluster's members left out, one per cluster (0-based, dense).
    Clusters with the same mix of kinds leave the same alpha, and most share a mix."""
    n_clusters = int(cluster.max()) + 1
    mix = np.zeros(n_clusters, dtype=np.int64)
    with np.errstate(over="ignore"):
        np.add.at(mix, cluster, _KIND_HASH[kind % len(_KIND_HASH)] + kind)
    _mixes, first, which = np.unique(mix, return_index=True, return_inverse=True)
    representative = np.full(n_clusters, -1)
    representative[first] = np.arange(len(first))
    members = representative[cluster] >= 0
    sums = _sums_of_kinds(representative[cluster[members]], kind[members], table)
    return alpha_batch(coincidences - sums, values, level)[which.ravel()]


def dense_codes(key) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, 0-based index of each): a lookup table for small non-negative keys,
    a sort otherwise."""
    key = np.asarray(key, dtype=np.int64)
    if len(key) and key.min() >= 0 and key.max() < 50_000_000:
        present = np.flatnonzero(np.bincount(key))
        lookup = np.zeros(int(key.max()) + 1, dtype=np.int64)
        lookup[present] = np.arange(len(present))
        return present, lookup[key]
    present, inverse = np.unique(key, return_inverse=True)
    return present, inverse.ravel()


@dataclass
class AlphaLeftOut:
    """Alpha, its pairable units, and per clustering (cells, annotators, cell x annotator)
    alpha with each cluster left out and that cluster's number of ratings."""

    alpha: float
    n_units: int
    left_out: list[tuple[np.ndarray, np.ndarray]]


def alpha_left_out(unit, value_index, annotator, cell, values, level: str = "ordinal"):
    """Alpha and, unless it is undefined, the delete-one-cluster estimates behind its
    interval (`AlphaLeftOut`). Inputs as for `alpha_two_way`."""
    values = np.asarray(values, dtype=float)
    unit, value_index, annotator, cell = (
        np.asarray(a, dtype=np.int64) for a in (unit, value_index, annotator, cell)
    )
    size = len(values)
    nan = float("nan")
    if len(unit) == 0:
        return AlphaLeftOut(nan, 0, [])
    counts = counts_from_ratings(unit, value_index, size)
    pairable = counts.sum(axis=1)[unit] >= 2
    unit, value_index, annotator, cell = (a[pairable] for a in (unit, value_index, annotator, cell))
    if len(unit) == 0:
        return AlphaLeftOut(nan, 0, [])
    # Units with the same value counts contribute the same, and a rating's share depends
    # only on its unit's counts and its value: a few dozen kinds, computed once each.
    unit_ids, unit = dense_codes(unit)
    counts = counts[unit_ids]
    n_units = len(counts)
    base = int(counts.max()) + 1
    _codes, kind_of_unit = dense_codes(counts @ base ** np.arange(size, dtype=np.int64))
    kinds = np.zeros((int(kind_of_unit.max()) + 1, size), dtype=counts.dtype)
    kinds[kind_of_unit] = counts
    kind_coincidences = pattern_coincidences(kinds)
    coincidences = np.tensordot(
        np.bincount(kind_of_unit, minlength=len(kinds)), kind_coincidences, axes=1
    )
    alpha = float(alpha_batch(coincidences[None], values, level)[0])
    if not np.isfinite(alpha):
        return AlphaLeftOut(alpha, n_units, [])

    # What a rating takes away when it is left out: its unit's coincidences minus those
    # of the unit without it (none if one rating would remain), per (kind, value).
    rest = (kinds[:, None, :] - np.eye(size, dtype=kinds.dtype)[None, :, :]).reshape(-1, size)
    m_rest = rest.sum(axis=1).astype(float)
    without = (rest[:, :, None] * rest[:, None, :]).astype(float)
    diagonal = np.arange(size)
    without[:, diagonal, diagonal] -= rest
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(m_rest >= 2, 1 / (m_rest - 1), 0.0)
    taken = np.repeat(kind_coincidences, size, axis=0) - without * scale[:, None, None]
    # Only the (kind, value) pairs that occur.
    present, rating_kind = dense_codes(kind_of_unit[unit] * size + value_index)
    taken = taken[present]

    _cell_ids, cell = dense_codes(cell)
    n_cells = int(cell.max()) + 1
    cell_of_unit = np.zeros(n_units, dtype=np.int64)
    cell_of_unit[unit] = cell
    _annotator_ids, annotator = dense_codes(annotator)
    n_annotators = int(annotator.max()) + 1
    _pairs, both = dense_codes(cell * n_annotators + annotator)
    # A unit belongs to one cell: leaving a cell out removes its units whole.
    left_out = [
        (
            _left_out_alphas(members, kind, table, coincidences, values, level),
            np.bincount(rating_cluster, minlength=clusters),
        )
        for members, rating_cluster, kind, table, clusters in (
            (cell_of_unit, cell, kind_of_unit, kind_coincidences, n_cells),
            (annotator, annotator, rating_kind, taken, n_annotators),
            (both, both, rating_kind, taken, int(both.max()) + 1),
        )
    ]
    return AlphaLeftOut(alpha, n_units, left_out)


def alpha_two_way(
    unit,
    value_index,
    annotator,
    cell,
    values,
    level: str = "ordinal",
    *,
    confidence: float = 0.95,
) -> AlphaEstimate:
    """Alpha with a two-way (cells, annotators) cluster-robust interval. Inputs are
    parallel arrays, one element per rating: its unit (0-based), its value's index into
    `values`, its annotator and its cell (any integers). One rating per annotator and
    unit, as judgments guarantee.

    V_cells + V_annotators - V_intersection, each a CR2 jackknife variance
    (`cr2_jackknife_variance`) with its effective number of clusters minus one degrees
    of freedom, and the generalized (fiducial) interval of that sum
    (`intervals.fiducial_half_width`); when the sum is not positive, the larger one-way
    variance alone, with Student's t on its degrees of freedom, as for means."""
    found = alpha_left_out(unit, value_index, annotator, cell, values, level)
    return alpha_interval(found, confidence)


def alpha_interval(found: AlphaLeftOut, confidence: float = 0.95) -> AlphaEstimate:
    """`alpha_two_way`'s interval from the delete-one-cluster estimates."""
    nan = float("nan")
    alpha = found.alpha
    if not found.left_out:
        return AlphaEstimate(alpha, nan, nan, found.n_units)
    terms = [cr2_jackknife_variance(without, alpha, sizes) for without, sizes in found.left_out]
    half = generalized_half_width(terms, confidence)
    if not np.isfinite(half):
        return AlphaEstimate(alpha, nan, nan, found.n_units)
    return AlphaEstimate(alpha, alpha - half, min(alpha + half, 1.0), found.n_units)


def generalized_half_width(terms, confidence: float) -> float:
    """The half-width of the generalized (fiducial) interval of V_cells + V_annotators -
    V_intersection from the three (variance, effective clusters) terms, each on its
    effective number of clusters minus one degrees of freedom; when the sum is not
    positive, the larger one-way variance with Student's t on its own, as for means
    (Cameron, Gelbach and Miller, section 2.3)."""
    (v_c, _e), (v_a, _e), (v_ca, _e) = terms
    df = [effective - 1 for _v, effective in terms]
    if v_c + v_a - v_ca > 0:
        return fiducial_half_width([v_c, v_a, v_ca], df, [1, 1, -1], confidence)
    larger = 0 if v_c >= v_a else 1
    return fiducial_half_width([terms[larger][0]], [df[larger]], [1], confidence)


@dataclass
class SandwichStrengths:
    standard_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray


def bradley_terry_two_way(
    theta, winner, loser, tie, cell, annotator, *, prior: float = 0.01, confidence: float = 0.95
) -> SandwichStrengths:
    """Two-way (cells, annotators) cluster-robust t intervals for centred Bradley-Terry
    log-strengths `theta` fitted to these comparisons (indices into `theta`; a tie counts
    half to each side). Each comparison's influence on theta is H^-1 times its score
    (the sandwich), centred like theta; per source the influences are clustered as in
    `two_way_cluster_means`."""
    theta = np.asarray(theta, dtype=float)
    winner, loser, cell, annotator = (
        np.asarray(a, dtype=np.int64) for a in (winner, loser, cell, annotator)
    )
    outcome = np.where(np.asarray(tie, dtype=bool), 0.5, 1.0)
    n_sources, n = len(theta), len(winner)
    nan = np.full(n_sources, np.nan)
    if n == 0:
        return SandwichStrengths(nan, nan.copy(), nan.copy())
    p = 1.0 / (1.0 + np.exp(theta[loser] - theta[winner]))
    games = np.zeros((n_sources, n_sources))
    np.add.at(games, (winner, loser), 1.0)
    games += games.T
    strength_gap = theta[:, None] - theta[None, :]
    curvature = games * (1 / (1 + np.exp(-strength_gap))) * (1 / (1 + np.exp(strength_gap)))
    hessian = np.diag(curvature.sum(axis=1) + prior) - curvature
    # Score of one comparison: (y - p) (e_winner - e_loser).
    residual = outcome - p
    scores = np.zeros((n, n_sources))
    scores[np.arange(n), winner] += residual
    scores[np.arange(n), loser] -= residual
    influence = scores @ np.linalg.inv(hessian).T
    influence -= influence.mean(axis=1, keepdims=True)  # theta is centred
    # The clustered standard error of the mean of n influences, times n, is the
    # standard error of their sum.
    _c, cell_index = np.unique(cell, return_inverse=True)
    _a, annotator_index = np.unique(annotator, return_inverse=True)
    stacked = two_way_cluster_means(
        influence.T.ravel(),
        np.repeat(np.arange(n_sources), n),
        np.tile(cell_index.ravel(), n_sources),
        np.tile(annotator_index.ravel(), n_sources),
        n_sources,
        confidence=confidence,
    )
    standard_error = stacked.standard_error * n
    t = t_quantile(stacked.df, confidence)
    return SandwichStrengths(standard_error, theta - t * standard_error, theta + t * standard_error)
