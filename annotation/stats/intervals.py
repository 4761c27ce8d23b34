"""Confidence intervals that respect how the ratings were collected.

Every rating belongs to a cell (the character x scenario it is about; a diversity set is
its own cell) and to an annotator, and both recur: ratings are crossed-clustered. The
intervals here are the two-way cluster-robust ones of Cameron, Gelbach and Miller (2011):
for a mean, the variance is V_cells + V_annotators - V_intersection, each a sum over
clusters of squared summed residuals. It is a closed form (no draws), so it is exact to
reproduce, and it does not count the residual variance twice as resampling cells and
annotators independently does (that "pigeonhole" bootstrap gives each rating a weight of
variance about 3 instead of 1, intervals about 1.7x too wide when residual noise
dominates, as it does for paired differences). Intervals use Student's t with
min(cells, annotators) - 1 degrees of freedom, the usual small-cluster correction.

Proportions get a Wilson interval on the effective sample size n / deff, where the
design effect deff compares the cluster-robust variance of the proportion with the
binomial one (Korn and Graubard 1998): Wilson's good behaviour near 0 and 1, widened
for clustering.

A minimum-information rule keeps intervals that would mean nothing off the page: below
`min_judgments` judgments or `min_annotators` annotators an estimate has no interval.
"""

from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


def normal_quantile(confidence: float) -> float:
    """Two-sided normal quantile, by bisection on erf (no scipy needed)."""
    from math import erf, sqrt

    target = 1 - (1 - confidence) / 2
    low, high = 0.0, 10.0
    for _ in range(80):
        middle = (low + high) / 2
        if 0.5 * (1 + erf(middle / sqrt(2))) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def t_quantile(df, confidence: float = 0.95):
    """Two-sided Student t quantile (Cornish-Fisher expansion in 1/df; within 0.005 of
    the exact value from 3 degrees of freedom on, exact values below). Vectorised."""
    df = np.asarray(df, dtype=float)
    z = Z95 if confidence == 0.95 else normal_quantile(confidence)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    with np.errstate(divide="ignore", invalid="ignore"):
        t = z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
    if confidence == 0.95:
        # The expansion is poor below 3 degrees of freedom; these are exact.
        t = np.where(df == 1, 12.706204736, t)
        t = np.where(df == 2, 4.302652730, t)
    return np.where(df >= 1, t, np.nan)


@dataclass
class ClusteredMeans:
    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n: np.ndarray  # observations per group
    cells: np.ndarray  # distinct cells per group
    annotators: np.ndarray  # distinct annotators per group
    standard_error: np.ndarray


# Up to this many (group, cluster) keys, sums per key are a dense bincount; beyond it,
# groups are taken a slice at a time, up to this many slices, and then keys are sorted.
DENSE_KEYS = 4_000_000
DENSE_SLICES = 16


def _compact(cluster) -> np.ndarray:
    """0-based indices of the distinct clusters that occur (a lookup table, no sort, for
    ids of a reasonable size), so that absent ids take no room in a dense table."""
    if len(cluster) == 0 or cluster.min() < 0 or cluster.max() >= 50_000_000:
        return np.unique(cluster, return_inverse=True)[1].ravel()
    present = np.bincount(cluster) > 0
    lookup = np.cumsum(present) - 1
    return lookup[cluster]


def _dense_squares(group, cluster, residuals, n_groups, n_clusters):
    sums = np.bincount(
        group * n_clusters + cluster, weights=residuals, minlength=n_groups * n_clusters
    )
    present = np.bincount(group * n_clusters + cluster, minlength=n_groups * n_clusters) > 0
    return (
        (sums**2).reshape(n_groups, n_clusters).sum(axis=1),
        present.reshape(n_groups, n_clusters).sum(axis=1),
    )


def _cluster_squares(group, cluster, residuals, n_groups):
    """Per group: the sum over clusters of (sum of residuals in the cluster)^2, and how
    many clusters the group has."""
    cluster = _compact(cluster)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 1
    per_slice = DENSE_KEYS // n_clusters
    if n_groups * n_clusters <= DENSE_KEYS:
        return _dense_squares(group, cluster, residuals, n_groups, n_clusters)
    if per_slice >= 1 and n_groups <= per_slice * DENSE_SLICES:
        squares = np.zeros(n_groups)
        clusters = np.zeros(n_groups, dtype=np.int64)
        for start in range(0, n_groups, per_slice):
            stop = min(start + per_slice, n_groups)
            rows = (group >= start) & (group < stop)
            squares[start:stop], clusters[start:stop] = _dense_squares(
                group[rows] - start, cluster[rows], residuals[rows], stop - start, n_clusters
            )
        return squares, clusters
    key = group * n_clusters + cluster
    unique, inverse = np.unique(key, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=residuals)
    owner = unique // n_clusters
    return (
        np.bincount(owner, weights=sums**2, minlength=n_groups),
        np.bincount(owner, minlength=n_groups),
    )


def two_way_cluster_means(
    values, group, cell, annotator, n_groups: int, *, confidence: float = 0.95
) -> ClusteredMeans:
    """Per group: mean, two-way (cell, annotator) cluster-robust t interval, and the
    counts the minimum-information rule needs. Inputs are parallel arrays; `group`,
    `cell` and `annotator` are 0-based indices. Groups without observations get NaN."""
    values = np.asarray(values, dtype=float)
    group, cell, annotator = (np.asarray(a, dtype=np.int64) for a in (group, cell, annotator))
    n = np.bincount(group, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=values, minlength=n_groups) / n
    if len(values) == 0:
        nan = np.full(n_groups, np.nan)
        zeros = np.zeros(n_groups, dtype=np.int64)
        return ClusteredMeans(mean, nan, nan.copy(), n, zeros, zeros.copy(), nan.copy())
    residuals = values - mean[group]
    n_annotators = int(annotator.max()) + 1
    squares_c, cells = _cluster_squares(group, cell, residuals, n_groups)
    squares_a, annotators = _cluster_squares(group, annotator, residuals, n_groups)
    squares_ca, both = _cluster_squares(group, cell * n_annotators + annotator, residuals, n_groups)

    def corrected(squares, clusters):
        # G / (G - 1): the usual small-sample factor of cluster-robust variances.
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(clusters > 1, squares * clusters / (clusters - 1), np.nan)

    v_c, v_a, v_ca = corrected(squares_c, cells), corrected(squares_a, annotators), None
    v_ca = corrected(squares_ca, both)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = (v_c + v_a - v_ca) / n.astype(float) ** 2
        # The difference can come out negative in small samples; then the larger one-way
        # variance is the conservative choice (Cameron, Gelbach and Miller, section 2.3).
        fallback = np.fmax(v_c, v_a) / n.astype(float) ** 2
        variance = np.where(variance > 0, variance, fallback)
    standard_error = np.sqrt(variance)
    t = t_quantile(np.minimum(cells, annotators) - 1, confidence)
    return ClusteredMeans(
        mean,
        mean - t * standard_error,
        mean + t * standard_error,
        n,
        cells,
        annotators,
        standard_error,
    )


def wilson_effective(successes, n, deff=1.0, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval on the effective sample size n / deff (deff >= 1)."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    n_eff = n / max(float(deff), 1.0)
    denominator = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / denominator
    half = z * np.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / denominator
    return float(centre - half), float(centre + half)


def clustered_proportions(outcome, group, cell, annotator, n_groups: int):
    """Per group: (successes, n, design effect, interval low, interval high) for a 0/1
    `outcome`, the interval a Wilson interval on the clustering-adjusted sample size."""
    outcome = np.asarray(outcome, dtype=float)
    means = two_way_cluster_means(outcome, group, cell, annotator, n_groups)
    out = []
    for g in range(n_groups):
        n = int(means.n[g])
        successes = float(means.mean[g] * n) if n else 0.0
        p = successes / n if n else float("nan")
        binomial = p * (1 - p) / n if n else float("nan")
        clustered = means.standard_error[g] ** 2
        if n and binomial > 0 and np.isfinite(clustered):
            deff = max(1.0, clustered / binomial)
        else:
            deff = 1.0
        low, high = wilson_effective(successes, n, deff)
        out.append((round(successes), n, deff, low, high))
    return out


def enough_information(
    n, annotators, *, min_judgments: int, min_annotators: int
) -> np.ndarray | bool:
    """Whether an estimate rests on enough judgments and annotators for an interval."""
    return (np.asarray(n) >= min_judgments) & (np.asarray(annotators) >= min_annotators)
