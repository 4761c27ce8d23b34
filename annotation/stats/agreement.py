"""Inter-annotator agreement from value counts per unit.

Reliability data arrive as a units x values count table: `counts[u, c]` is how many
annotators gave value c (an index into `values`) to unit u. Large studies never build a
raters x units matrix. Units with the same count pattern contribute identically, so the
table is further reduced to distinct patterns with multiplicities, which also makes the
unit bootstrap a multinomial draw over a few dozen patterns.

Krippendorff's alpha follows Krippendorff (2011), "Computing Krippendorff's
Alpha-Reliability", via the coincidence matrix; it matches the `krippendorff` package.
"""

from dataclasses import dataclass

import numpy as np

from .arrays import cluster_resampling


def counts_from_ratings(
    unit_index: np.ndarray, value_index: np.ndarray, n_values: int, n_units: int | None = None
) -> np.ndarray:
    """units x values count table from parallel arrays (values already 0-based). With
    `n_units`, the table has that many rows, zeros for units without ratings."""
    if n_units is None:
        n_units = int(unit_index.max()) + 1 if len(unit_index) else 0
    flat = np.bincount(unit_index * n_values + value_index, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values)


def patterns(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct pairable rows (two or more values) and how often each occurs."""
    counts = np.asarray(counts)
    pairable = counts[counts.sum(axis=1) >= 2]
    if len(pairable) == 0:
        return np.zeros((0, counts.shape[1]), dtype=np.int64), np.zeros(0, dtype=np.int64)
    # Encode each row as one integer (base: largest count + 1) so that finding the
    # distinct rows is a 1-D unique, much faster than a row-wise one.
    base = int(pairable.max()) + 1
    weights = base ** np.arange(pairable.shape[1], dtype=np.int64)
    _codes, first, multiplicity = np.unique(
        pairable @ weights, return_index=True, return_counts=True
    )
    return pairable[first], multiplicity


def pattern_coincidences(unique: np.ndarray) -> np.ndarray:
    """One coincidence matrix per pattern: (n n^T - diag(n)) / (m - 1)."""
    m = unique.sum(axis=1).astype(float)
    outer = unique[:, :, None] * unique[:, None, :]
    diag = np.einsum("pc,cd->pcd", unique, np.eye(unique.shape[1]))
    return (outer - diag) / (m - 1)[:, None, None]


def distance_matrix(values: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    """Squared distances between values: interval uses differences, ordinal the ranks
    implied by how often each value was used."""
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2.0
    if level == "ordinal":
        cumulative = np.cumsum(marginals)
        n = len(values)
        delta = np.zeros((n, n))
        for c in range(n):
            for k in range(n):
                low, high = min(c, k), max(c, k)
                between = cumulative[high] - (cumulative[low - 1] if low > 0 else 0)
                delta[c, k] = (between - (marginals[c] + marginals[k]) / 2.0) ** 2
        return delta
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    raise ValueError(f"unknown level of measurement {level!r}")


def alpha_from_coincidences(coincidences: np.ndarray, values: np.ndarray, level: str) -> float:
    marginals = coincidences.sum(axis=1)
    n = marginals.sum()
    if n <= 1:
        return float("nan")
    delta = distance_matrix(values, marginals, level)
    observed = (coincidences * delta).sum()
    expected = (np.outer(marginals, marginals) * delta).sum() / (n - 1)
    if expected == 0:
        # Every value the same: no variation to agree or disagree about.
        return float("nan")
    return float(1.0 - observed / expected)


def _patterns_of(counts, reduced):
    """`reduced` is patterns(counts) computed once by a caller that needs several figures
    of the same table."""
    return reduced if reduced is not None else patterns(np.asarray(counts))


def krippendorff_alpha(
    counts: np.ndarray, values, level: str = "ordinal", *, reduced=None
) -> float:
    """Alpha from a units x values count table. NaN when undefined (no pairable unit, or
    no variation at all)."""
    values = np.asarray(values, dtype=float)
    unique, multiplicity = _patterns_of(counts, reduced)
    if len(unique) == 0:
        return float("nan")
    coincidences = np.tensordot(multiplicity, pattern_coincidences(unique), axes=1)
    return alpha_from_coincidences(coincidences, values, level)


@dataclass
class AlphaEstimate:
    alpha: float
    ci_low: float
    ci_high: float
    n_units: int


def bootstrap_alpha(
    counts: np.ndarray,
    values,
    level: str = "ordinal",
    *,
    draws: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    reduced=None,
) -> AlphaEstimate:
    """Alpha with a percentile bootstrap interval that resamples units."""
    values = np.asarray(values, dtype=float)
    unique, multiplicity = _patterns_of(counts, reduced)
    n_units = int(multiplicity.sum())
    if n_units == 0:
        return AlphaEstimate(float("nan"), float("nan"), float("nan"), 0)
    per_pattern = pattern_coincidences(unique)
    alpha = alpha_from_coincidences(np.tensordot(multiplicity, per_pattern, axes=1), values, level)
    rng = np.random.default_rng(seed)
    resampled = rng.multinomial(n_units, multiplicity / n_units, size=draws)
    coincidences = np.tensordot(resampled, per_pattern, axes=1)
    estimates = np.array([alpha_from_coincidences(c, values, level) for c in coincidences])
    estimates = estimates[~np.isnan(estimates)]
    if len(estimates) == 0:
        return AlphaEstimate(alpha, float("nan"), float("nan"), n_units)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return AlphaEstimate(alpha, float(low), float(high), n_units)


def within_one(counts: np.ndarray, values, *, reduced=None) -> float:
    """Share of pairs of ratings of the same unit that differ by at most one point."""
    values = np.asarray(values, dtype=float)
    unique, multiplicity = _patterns_of(counts, reduced)
    if len(unique) == 0:
        return float("nan")
    close = (np.abs(values[:, None] - values[None, :]) <= 1).astype(float)
    pairs = unique[:, :, None] * unique[:, None, :] - np.einsum(
        "pc,cd->pcd", unique, np.eye(len(values))
    )
    agreeing = (pairs * close).sum(axis=(1, 2))
    total = pairs.sum(axis=(1, 2))
    return float((multiplicity * agreeing).sum() / (multiplicity * total).sum())


def icc_1k(counts: np.ndarray, values, *, reduced=None) -> float:
    """ICC(1,k): one-way random effects, reliability of the mean of k ratings, for
    designs where each unit is rated by a different random set of annotators. Uses the
    mean number of ratings per unit (k0) when units differ in how many they have.
    Computed over the distinct count patterns of units with two or more ratings, each
    weighted by how often it occurs."""
    values = np.asarray(values, dtype=float)
    unique, weight = _patterns_of(counts, reduced)
    m = unique.sum(axis=1).astype(float)
    n_units, n = int(weight.sum()), float((weight * m).sum())
    if n_units < 2 or n - n_units <= 0:
        return float("nan")
    sums = unique @ values
    squares = unique @ (values**2)
    unit_means = sums / m
    grand = (weight * sums).sum() / n
    between = (weight * m * (unit_means - grand) ** 2).sum() / (n_units - 1)
    within = (weight * (squares - m * unit_means**2)).sum() / (n - n_units)
    if between == 0:
        return float("nan")
    return float((between - within) / between)


def alpha_batch(coincidences: np.ndarray, values, level: str) -> np.ndarray:
    """`alpha_from_coincidences` for a stack of coincidence matrices (draws x V x V),
    without a Python loop per draw."""
    coincidences = np.asarray(coincidences, dtype=float)
    values = np.asarray(values, dtype=float)
    marginals = coincidences.sum(axis=2)
    n = marginals.sum(axis=1)
    size = len(values)
    if level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]) ** 2.0, coincidences.shape)
    elif level == "ordinal":
        cumulative = np.concatenate(
            [np.zeros((len(marginals), 1)), np.cumsum(marginals, axis=1)], axis=1
        )
        grid = np.arange(size)
        high = np.maximum(grid[:, None], grid[None, :]) + 1
        low = np.minimum(grid[:, None], grid[None, :])
        between = cumulative[:, high] - cumulative[:, low]
        delta = (between - (marginals[:, :, None] + marginals[:, None, :]) / 2.0) ** 2
    elif level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(size), coincidences.shape)
    else:
        raise ValueError(f"unknown level of measurement {level!r}")
    observed = (coincidences * delta).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum(axis=(1, 2)) / (
            n - 1
        )
        alpha = 1.0 - observed / expected
    return np.where((n > 1) & (expected > 0), alpha, np.nan)


def bootstrap_alpha_clustered(
    counts: np.ndarray,
    values,
    cluster: np.ndarray,
    level: str = "ordinal",
    *,
    draws: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AlphaEstimate:
    """Alpha with a percentile interval that resamples clusters of units (all answers
    rated for one character x scenario cell go together) instead of single units:
    units of the same cell share their question and context, so they are not
    independent. `cluster` gives each unit's 0-based cluster index."""
    counts = np.asarray(counts)
    cluster = np.asarray(cluster, dtype=np.int64)
    pairable = counts.sum(axis=1) >= 2
    counts, cluster = counts[pairable], cluster[pairable]
    values = np.asarray(values, dtype=float)
    n_units = len(counts)
    if n_units == 0:
        return AlphaEstimate(float("nan"), float("nan"), float("nan"), 0)
    # Per unit (n n^T - diag n) / (m - 1), summed per cluster: clusters x V x V.
    per_unit = pattern_coincidences(counts)
    _ids, cluster = np.unique(cluster, return_inverse=True)
    cluster = cluster.ravel()
    n_clusters = int(cluster.max()) + 1
    size = counts.shape[1]
    flat = per_unit.reshape(n_units, -1)
    per_cluster = np.stack(
        [np.bincount(cluster, weights=flat[:, k], minlength=n_clusters) for k in range(size**2)],
        axis=1,
    )
    alpha = alpha_batch(per_cluster.sum(axis=0).reshape(1, size, size), values, level)[0]
    if draws == 0 or n_clusters < 2:
        return AlphaEstimate(float(alpha), float("nan"), float("nan"), n_units)
    weights = cluster_resampling(n_clusters, draws, seed)
    boot = alpha_batch((weights @ per_cluster).reshape(draws, size, size), values, level)
    boot = boot[~np.isnan(boot)]
    if len(boot) == 0:
        return AlphaEstimate(float(alpha), float("nan"), float("nan"), n_units)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return AlphaEstimate(float(alpha), float(low), float(high), n_units)
