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
the effective number of cells or annotators (the fewer) minus one degrees of freedom, and
each one-way variance is CR2 (Bell and McCaffrey 2002) rather than scaled by G / (G - 1):
when a few annotators do most of the work, both the variance and the degrees of freedom
of the usual small-cluster correction are too optimistic (`effective_clusters`).

Proportions get a Wilson interval on the effective sample size n / deff, where the
design effect deff compares the cluster-robust variance of the proportion with the
binomial one, and Student's t in place of z (Korn and Graubard 1998): Wilson's good
behaviour near 0 and 1, widened for clustering and for few clusters.

Where a variance combines terms that nearly cancel, as alpha's annotator and cell x
annotator terms do (`clustered`), it is far less precise than any one count of clusters
says; `fiducial_half_width` gives its generalized (fiducial) interval (one term: t).

A minimum-information rule (`minimum`) keeps intervals that would mean nothing off the
page.
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
    """Two-sided Student t quantile for any real df >= 1 (Hill 1970, Algorithm 396):
    within 1e-4 of the exact value from 2 degrees of freedom on, exact at 1 and 2, and
    about 1 % too large (conservative) between them. Effective degrees of freedom are
    not whole numbers. Vectorised; NaN below 1."""
    df = np.asarray(df, dtype=float)
    p = 1 - confidence  # two-tailed
    z = Z95 if confidence == 0.95 else normal_quantile(confidence)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        n = np.where(df >= 1, df, 3.0)
        a = 1 / (n - 0.5)
        b = 48 / (a * a)
        c = ((20700 * a / b - 98) * a - 16) * a + 96.36
        d = ((94.5 / (b + c) - 3) / b + 1) * np.sqrt(a * np.pi / 2) * n
        y = (d * p) ** (2 / n)
        # Large df: a correction of the normal quantile.
        x = -z
        c_large = c + np.where(n < 5, 0.3 * (n - 4.5) * (x + 0.6), 0.0)
        c_large = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c_large
        y_large = (
            ((((0.4 * x * x + 6.3) * x * x + 36) * x * x + 94.5) / c_large - x * x - 3) / b + 1
        ) * x
        y_large = a * y_large * y_large
        y_large = np.where(y_large > 0.002, np.expm1(y_large), 0.5 * y_large**2 + y_large)
        # Small df: an expansion of the tail.
        y_small = (
            (1 / (((n + 6) / (n * y) - 0.089 * d - 0.822) * (n + 2) * 3) + 0.5 / (n + 4)) * y - 1
        ) * (n + 1) / (n + 2) + 1 / y
        t = np.sqrt(n * np.where(y > 0.05 + a, y_large, y_small))
        t = np.where(df == 2, np.sqrt(2 / (p * (2 - p)) - 2), t)
        t = np.where(df == 1, 1 / np.tan(p * np.pi / 2), t)
    return np.where(df >= 1, t, np.nan)


def _erf(x):
    """erf of non-negative x, vectorised (Abramowitz and Stegun 7.1.26: within 1.5e-7)."""
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return 1.0 - poly * np.exp(-np.minimum(x * x, 700.0))


def _inverse_chi_square_rule(df: float) -> tuple[np.ndarray, np.ndarray]:
    """Points x and weights w with sum(w f(x)) = E f(df / X), X chi-square with `df`
    degrees of freedom: the trapezoid rule in tau = log(X / 2), whose density
    exp(k tau - e^tau) / Gamma(k) (k = df / 2) is smooth and falls off at both ends, so
    that the rule converges fast: a step of the density's spread 1 / sqrt(k) (at most
    1/2) gives the quantile within 2e-6 of half that step, with an eighth of the points
    in a three-term product (alpha's interval: 1 ms instead of 7); points of weight below
    1e-15 of the largest are left out."""
    k = df / 2
    step = min(0.5, 1 / np.sqrt(k))
    low = np.log(k) + np.log(1e-15) / k - 1  # the left tail falls as e^(k tau)
    high = np.log(k) + 3 + 4 * np.log1p(8 / np.sqrt(k))  # the right one as e^(-e^tau)
    tau = np.arange(low, high, step)
    log_density = k * tau - np.exp(tau)
    weight = np.exp(log_density - log_density.max())
    keep = weight > 1e-15
    return df / (2 * np.exp(tau[keep])), weight[keep] / weight[keep].sum()


def fiducial_half_width(variances, dfs, signs, confidence: float = 0.95) -> float:
    """Half-width of the generalized (fiducial) confidence interval of an estimate whose
    variance is estimated as sum(sign * variance) from independent terms, each with
    `df` degrees of freedom (Weerahandi 1993; Hannig, Iyer and Patterson 2006): the
    `confidence` quantile of |Z| sqrt(max(V*, 0)), where V* = sum(sign * variance * df /
    X) with Z standard normal and each X an independent chi-square on its df. Each term
    is then as uncertain as its own clusters make it, and a difference of two terms that
    nearly cancel is as uncertain as the terms, not as their difference. With one term it
    is Student's t on that term's df, exactly (within 1e-7, the error of the erf used).

    Closed form up to quadrature: Z is integrated out exactly (an erf), each X by
    `_inverse_chi_square_rule`, and the quantile found by Newton's method within a
    bracket. NaN if a df is below 1 or not finite, or if no term adds variance."""
    variances, dfs, signs = (np.asarray(a, dtype=float) for a in (variances, dfs, signs))
    if not (np.all(np.isfinite(variances)) and np.all(np.isfinite(dfs)) and np.all(dfs >= 1)):
        return float("nan")
    upper = float(np.sum(variances[signs > 0]))
    if not upper > 0:
        return float("nan")
    spread, weight = np.zeros(1), np.ones(1)
    for variance, df, sign in zip(variances, dfs, signs, strict=True):
        points, weights = _inverse_chi_square_rule(df)
        spread = (spread[:, None] + sign * variance * points[None, :]).ravel()
        weight = (weight[:, None] * weights[None, :]).ravel()
        kept = weight > 1e-15
        spread, weight = spread[kept], weight[kept]
    positive = spread > 0
    root = np.sqrt(2 * spread[positive])
    weight, nothing = weight[positive], weight[~positive].sum()  # V* <= 0: covered

    def short(h):  # P(|Z| sqrt(V*) <= h) - confidence, and its derivative
        z = h / root
        slope = (weight * np.exp(-np.minimum(z * z, 700.0)) / root).sum() * 2 / np.sqrt(np.pi)
        return nothing + (weight * _erf(z)).sum() - confidence, slope

    if nothing >= confidence:
        return float("nan")
    low, high = 0.0, float(np.sqrt(upper))
    while short(high)[0] < 0:
        low, high = high, 2 * high
    h = 0.5 * (low + high)
    for _ in range(200):
        gap, slope = short(h)
        low, high = (h, high) if gap < 0 else (low, h)
        step = gap / slope if slope > 0 else np.inf
        following = h - step if low < h - step < high else 0.5 * (low + high)
        if abs(following - h) <= 1e-12 * h:
            return float(following)
        h = following
    return float(h)


@dataclass
class ClusteredMeans:
    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n: np.ndarray  # observations per group
    cells: np.ndarray  # distinct cells per group
    annotators: np.ndarray  # distinct annotators per group
    standard_error: np.ndarray
    df: np.ndarray  # degrees of freedom of the t quantile
    effective_cells: np.ndarray  # `effective_clusters` of each one-way term
    effective_annotators: np.ndarray


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


def _dense_keys(group, cluster, residuals, n_groups, n_clusters):
    key = group * n_clusters + cluster
    sums = np.bincount(key, weights=residuals, minlength=n_groups * n_clusters)
    sizes = np.bincount(key, minlength=n_groups * n_clusters)
    present = np.flatnonzero(sizes)
    return present // n_clusters, sums[present], sizes[present]


def _cluster_sums(group, cluster, residuals, n_groups):
    """Per (group, cluster) that occurs: its group, the sum of its residuals, and how
    many observations it holds."""
    cluster = _compact(cluster)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 1
    per_slice = DENSE_KEYS // n_clusters
    if n_groups * n_clusters <= DENSE_KEYS:
        return _dense_keys(group, cluster, residuals, n_groups, n_clusters)
    if per_slice >= 1 and n_groups <= per_slice * DENSE_SLICES:
        parts = []
        for start in range(0, n_groups, per_slice):
            stop = min(start + per_slice, n_groups)
            rows = (group >= start) & (group < stop)
            owner, sums, sizes = _dense_keys(
                group[rows] - start, cluster[rows], residuals[rows], stop - start, n_clusters
            )
            parts.append((owner + start, sums, sizes))
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))
    key = group * n_clusters + cluster
    unique, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.ravel()
    return (
        unique // n_clusters,
        np.bincount(inverse, weights=residuals),
        np.bincount(inverse),
    )


@dataclass
class ClusterTerm:
    """One one-way clustered variance per group, and what its degrees of freedom need."""

    variance_sum: np.ndarray  # sum over clusters of CR2-adjusted squared score sums
    clusters: np.ndarray  # how many clusters the group has
    effective: np.ndarray  # their effective number (`effective_clusters`)


def _cluster_term(group, cluster, residuals, n_groups, n, *, effective=True) -> ClusterTerm:
    """CR2 (Bell and McCaffrey 2002) for a mean: with an intercept alone, the hat matrix
    block of a cluster of n_g of n observations has one non-zero eigenvalue n_g / n, on
    the direction of the cluster's sum, so (I - H_gg)^(-1/2) scales the sum's square by
    1 / (1 - n_g / n). It corrects the downward bias of large clusters (an annotator
    who did 40 % of the work pulls the mean towards herself: her residuals are too
    small), where the usual G / (G - 1) corrects nothing of the sort. Without
    `effective` (the intersection term, whose count no t quantile uses) the effective
    number is left NaN."""
    owner, sums, sizes = _cluster_sums(group, cluster, residuals, n_groups)
    total = n[owner].astype(float)
    sizes = sizes.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        adjusted = np.nan_to_num(np.where(sizes < total, sums**2 / (1 - sizes / total), np.nan))
    clusters = np.bincount(owner, minlength=n_groups)
    variance_sum = np.bincount(owner, weights=adjusted, minlength=n_groups)
    count = np.full(n_groups, np.nan)
    if effective:
        m1, m2, m3, m4 = (
            np.bincount(owner, weights=sizes**k, minlength=n_groups) for k in (1, 2, 3, 4)
        )
        share = np.bincount(owner, weights=sizes * adjusted, minlength=n_groups)
        count = effective_clusters(m1, m2, m3, m4, variance_sum, share)
    return ClusterTerm(np.where(clusters > 1, variance_sum, np.nan), clusters, count)


def effective_clusters(m1, m2, m3, m4, s1, s2):
    """The effective number of clusters of a clustered variance, per group: how many
    equal clusters would give its estimate the same precision (a Satterthwaite count,
    as in Carter, Schnepel and Steigerwald 2017). `m1`..`m4` are the sums over clusters
    of size^1..size^4; `s1` and `s2` the sums of each cluster's contribution to the
    variance, plain and times its size.

    A cluster's contribution has expectation lambda_g = a n_g + b n_g^2: a share of
    observation-level noise plus a share of what the cluster's members have in common
    (an annotator's leniency); a and b >= 0 are fitted to the contributions by moments.
    The estimate's variance is then a sum of scaled chi-squares with weights lambda_g,
    whose effective number is (sum lambda)^2 / sum lambda^2: G for equal clusters,
    (sum n)^2 / sum n^2 (Kish) when members share nothing, fewer still when they share a
    lot and a few clusters hold most of the observations."""
    m1, m2, m3, m4, s1, s2 = (np.asarray(x, dtype=float) for x in (m1, m2, m3, m4, s1, s2))
    with np.errstate(invalid="ignore", divide="ignore"):
        determinant = m1 * m3 - m2**2
        a = (s1 * m3 - s2 * m2) / determinant
        b = (m1 * s2 - m2 * s1) / determinant
        # Equal sizes leave a and b unidentified, and every ratio gives G.
        unidentified = ~(determinant > 1e-9 * m2**2) | ~np.isfinite(a) | ~np.isfinite(b)
        a, b = np.where(unidentified, 1.0, a), np.where(unidentified, 0.0, b)
        # A negative share is noise in the fit: that share is zero.
        a, b = np.where(b < 0, 1.0, a), np.maximum(b, 0.0)
        a = np.where(a < 0, 0.0, a)
        a, b = np.where((a == 0) & (b == 0), 1.0, a), b
        effective = (a * m1 + b * m2) ** 2 / (a * a * m2 + 2 * a * b * m3 + b * b * m4)
    return np.where(m1 > 0, effective, 0.0)


def two_way_cluster_means(
    values, group, cell, annotator, n_groups: int, *, confidence: float = 0.95
) -> ClusteredMeans:
    """Per group: mean, two-way (cell, annotator) cluster-robust t interval, and the
    counts the minimum-information rule needs. Inputs are parallel arrays; `group`,
    `cell` and `annotator` are 0-based indices. Groups without observations get NaN.

    Each one-way variance is CR2 (`_cluster_term`); the t quantile has the effective
    number of cells or of annotators, whichever is smaller, minus one degrees of
    freedom: with even workloads that is min(cells, annotators) - 1, and when a few
    annotators did most of the work, fewer (`effective_clusters`)."""
    values = np.asarray(values, dtype=float)
    group, cell, annotator = (np.asarray(a, dtype=np.int64) for a in (group, cell, annotator))
    n = np.bincount(group, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=values, minlength=n_groups) / n
    zeros = np.zeros(n_groups, dtype=np.int64)
    if len(values) == 0:
        nan = np.full(n_groups, np.nan)
        return ClusteredMeans(mean, nan, nan, n, zeros, zeros, nan, nan, nan, nan)
    residuals = values - mean[group]
    n_annotators = int(annotator.max()) + 1
    by_cell = _cluster_term(group, cell, residuals, n_groups, n)
    by_annotator = _cluster_term(group, annotator, residuals, n_groups, n)
    by_both = _cluster_term(
        group, cell * n_annotators + annotator, residuals, n_groups, n, effective=False
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        v_c, v_a = by_cell.variance_sum, by_annotator.variance_sum
        variance = (v_c + v_a - by_both.variance_sum) / n.astype(float) ** 2
        # The difference can come out negative in small samples; then the larger one-way
        # variance is the conservative choice (Cameron, Gelbach and Miller, section 2.3).
        fallback = np.fmax(v_c, v_a) / n.astype(float) ** 2
        variance = np.where(variance > 0, variance, fallback)
    standard_error = np.sqrt(variance)
    df = np.minimum(by_cell.effective, by_annotator.effective) - 1
    t = t_quantile(df, confidence)
    return ClusteredMeans(
        mean,
        mean - t * standard_error,
        mean + t * standard_error,
        n,
        by_cell.clusters,
        by_annotator.clusters,
        standard_error,
        df,
        by_cell.effective,
        by_annotator.effective,
    )


def wilson_effective(successes, n, deff=1.0, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval on the effective sample size n / deff (deff >= 1), with
    quantile `z` (a t quantile for Korn and Graubard's correction)."""
    if n <= 0 or not np.isfinite(z):
        return float("nan"), float("nan")
    p = successes / n
    n_eff = n / max(float(deff), 1.0)
    denominator = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / denominator
    half = z * np.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / denominator
    return float(max(centre - half, 0.0)), float(min(centre + half, 1.0))


def clustered_proportions(
    outcome, group, cell, annotator, n_groups: int, *, confidence: float = 0.95
):
    """Per group: (successes, n, design effect, interval low, interval high) for a 0/1
    `outcome`: a Wilson interval on the sample size divided by the design effect, with
    Student's t on the means' degrees of freedom in place of z (Korn and Graubard 1998;
    Wilson on n / deff with t is Wilson on their df-adjusted n* = n / deff (z / t)^2
    with z). A group of one annotator (their own position bias) is about that
    annotator: its degrees of freedom count cells alone.

    At a proportion of 0 or 1 the data say nothing about how alike a cluster's outcomes
    are, and a design effect of 1 would treat hundreds of judgments by a few annotators
    as independent. There the effective sample size is the effective number of
    clusters (cells or annotators, the fewer), as if each cluster's judgments were all
    alike: the widest the clustering allows, and what the interval stays within."""
    outcome = np.asarray(outcome, dtype=float)
    means = two_way_cluster_means(outcome, group, cell, annotator, n_groups)
    df = np.where(means.annotators > 1, means.df, means.effective_cells - 1)
    out = []
    for g in range(n_groups):
        n = int(means.n[g])
        successes = float(means.mean[g] * n) if n else 0.0
        p = successes / n if n else float("nan")
        binomial = p * (1 - p) / n if n else float("nan")
        clustered = means.standard_error[g] ** 2
        if n and binomial > 0 and np.isfinite(clustered):
            deff = max(1.0, clustered / binomial)
        elif n and df[g] >= 1:
            deff = max(1.0, n / (df[g] + 1))
        else:
            deff = 1.0
        t = float(t_quantile(df[g], confidence)) if n else float("nan")
        low, high = wilson_effective(successes, n, deff, t)
        out.append((round(successes), n, deff, low, high))
    return out
