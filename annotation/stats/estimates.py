"""Bradley-Terry strengths, Wilson intervals, and the cluster bootstraps the published
intervals no longer use.

What the results publish: Bradley-Terry log-strengths (`bradley_terry_estimates`) with
two-way (cells, annotators) cluster-robust sandwich intervals from
`clustered.bradley_terry_two_way`; its cell bootstrap only screens a strength for near
separation (a source that won or lost everything in too many resamples gets no
interval). Means, paired differences and proportions have closed-form two-way intervals
in `intervals`.

Kept for comparison and for the tests that show why they were replaced: the
"pigeonhole" bootstrap of means that resamples cells and annotators independently
(`cluster_bootstrap_means`: it counts rating-level noise about three times, intervals
too wide), and the cell-only percentile bootstrap of strengths (`bradley_terry_bootstrap`:
it leaves out which annotators took part, intervals too narrow).
"""

import hashlib
from dataclasses import dataclass

import numpy as np

from .arrays import cluster_resampling
from .clustered import bradley_terry_two_way


@dataclass
class GroupEstimates:
    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n: np.ndarray


def _aggregate(group, cell, annotator, values):
    """Sum and count per (group, cell, annotator): each bootstrap draw then touches one
    row per combination rather than one per rating."""
    n_cells, n_annotators = int(cell.max()) + 1, int(annotator.max()) + 1
    key = (group * n_cells + cell) * n_annotators + annotator
    unique, inverse = np.unique(key, return_inverse=True)
    inverse = inverse.ravel()
    sums = np.bincount(inverse, weights=values)
    counts = np.bincount(inverse).astype(float)
    return (
        unique // (n_cells * n_annotators),
        (unique // n_annotators) % n_cells,
        unique % n_annotators,
        sums,
        counts,
    )


def cluster_bootstrap_means(
    values,
    group,
    cell,
    annotator,
    n_groups: int,
    *,
    draws: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> GroupEstimates:
    """Per group: the mean of `values`, its count, and a percentile interval from
    resampling cells and annotators (independently, with replacement).

    All inputs are parallel integer/float arrays; `group`, `cell` and `annotator` are
    0-based indices."""
    values = np.asarray(values, dtype=float)
    group, cell, annotator = (np.asarray(a, dtype=np.int64) for a in (group, cell, annotator))
    n = np.bincount(group, minlength=n_groups)
    sums = np.bincount(group, weights=values, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / n
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    if len(values) == 0 or draws == 0:
        return GroupEstimates(mean, low, high, n)
    g, c, a, s, k = _aggregate(group, cell, annotator, values)
    n_cells, n_annotators = int(cell.max()) + 1, int(annotator.max()) + 1
    rng = np.random.default_rng(seed)
    cell_weights = rng.multinomial(n_cells, np.full(n_cells, 1 / n_cells), size=draws)
    annotator_weights = rng.multinomial(
        n_annotators, np.full(n_annotators, 1 / n_annotators), size=draws
    )
    if n_cells * n_annotators <= DENSE_LIMIT:
        boot = _draws_dense(
            g, c, a, s, k, n_groups, n_cells, n_annotators, cell_weights, annotator_weights
        )
    else:
        boot = _draws_sparse(g, c, a, s, k, n_groups, cell_weights, annotator_weights)
    tail = (1 - confidence) / 2 * 100
    for index in range(n_groups):
        column = boot[:, index]
        column = column[~np.isnan(column)]
        if len(column):
            low[index], high[index] = np.percentile(column, [tail, 100 - tail])
    return GroupEstimates(mean, low, high, n)


# Up to this many (cell, annotator) combinations, each group's sums go into a dense
# cells x annotators matrix and all draws are two matrix products (BLAS); beyond it, each
# draw is a weighted bincount over the combinations.
DENSE_LIMIT = 1_000_000


def _draws_dense(g, c, a, s, k, n_groups, n_cells, n_annotators, cell_weights, annotator_weights):
    """numerator_b = wc_b' S_g wa_b for every draw b at once.

    The sums matrices of several groups go side by side into one matrix product (BLAS
    runs faster on wide products than on many small ones). Groups often share their
    counts exactly (every metric of a source is rated in the same judgments), so each
    distinct counts pattern is resampled only once."""
    boot = np.full((len(cell_weights), n_groups), np.nan)
    order = np.argsort(g, kind="stable")
    bounds = np.searchsorted(g[order], np.arange(n_groups + 1))
    cell_weights = cell_weights.astype(float)
    annotator_weights = annotator_weights.astype(float)
    rows_of = {
        group: order[bounds[group] : bounds[group + 1]]
        for group in range(n_groups)
        if bounds[group + 1] > bounds[group]
    }
    present = list(rows_of)
    denominators: dict[bytes, np.ndarray] = {}
    for start in range(0, len(present), DENSE_BATCH):
        batch = present[start : start + DENSE_BATCH]
        sums = np.zeros((n_cells, len(batch), n_annotators))
        for j, group in enumerate(batch):
            rows = rows_of[group]
            sums[c[rows], j, a[rows]] = s[rows]
        weighted = (cell_weights @ sums.reshape(n_cells, -1)).reshape(
            len(cell_weights), len(batch), n_annotators
        )
        numerators = np.einsum("bga,ba->bg", weighted, annotator_weights)
        for j, group in enumerate(batch):
            rows = rows_of[group]
            # Rows come sorted by (cell, annotator) from _aggregate, so equal patterns
            # are byte-for-byte equal arrays.
            pattern = hashlib.blake2b(
                c[rows].tobytes() + a[rows].tobytes() + k[rows].tobytes(), digest_size=16
            ).digest()
            denominator = denominators.get(pattern)
            if denominator is None:
                counts = np.zeros((n_cells, n_annotators))
                counts[c[rows], a[rows]] = k[rows]
                denominator = ((cell_weights @ counts) * annotator_weights).sum(axis=1)
                denominators[pattern] = denominator
            with np.errstate(invalid="ignore", divide="ignore"):
                boot[:, group] = numerators[:, j] / denominator
    return boot


# Groups per matrix product: 16 groups of 1,200 cells x 180 annotators is 28 MB.
DENSE_BATCH = 16


def _draws_sparse(g, c, a, s, k, n_groups, cell_weights, annotator_weights):
    boot = np.empty((len(cell_weights), n_groups))
    for b in range(len(cell_weights)):
        w = cell_weights[b, c] * annotator_weights[b, a]
        numerator = np.bincount(g, weights=w * s, minlength=n_groups)
        denominator = np.bincount(g, weights=w * k, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot[b] = numerator / denominator
    return boot


def wilson_interval(
    successes: float, n: float, z: float = 1.959963984540054
) -> tuple[float, float]:
    """Wilson score interval for a proportion; (nan, nan) without observations."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return float(centre - half), float(centre + half)


def bradley_terry(wins: np.ndarray, *, prior: float = 0.01, iterations: int = 50) -> np.ndarray:
    """Log-strengths from a wins matrix (`wins[i, j]`: times i beat j; a tie counts half
    to each), fitted by Newton's method. A weak Gaussian prior (`prior` x theta^2 / 2)
    keeps a source that never wins finite. Centred to mean zero; sources that never
    played get NaN."""
    wins = np.asarray(wins, dtype=float)
    games = wins + wins.T
    played = games.sum(axis=1) > 0
    result = np.full(len(wins), np.nan)
    if not played.any():
        return result
    w, n = wins[np.ix_(played, played)], games[np.ix_(played, played)]
    theta = np.zeros(len(w))
    total_wins = w.sum(axis=1)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        gradient = total_wins - (n * p).sum(axis=1) - prior * theta
        curvature = n * p * (1 - p)
        hessian = np.diag(curvature.sum(axis=1) + prior) - curvature
        step = np.linalg.solve(hessian, gradient)
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    result[played] = theta - theta.mean()
    return result


def bradley_terry_bootstrap(
    winner,
    loser,
    tie,
    cluster,
    n_sources: int,
    *,
    draws: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
):
    """Log-strengths with percentile intervals from resampling clusters (cells) of
    comparisons. `winner`/`loser` are source indices per comparison (for a tie, the two
    sources in either order with `tie` true)."""
    winner, loser, cluster = (np.asarray(a, dtype=np.int64) for a in (winner, loser, cluster))
    tie = np.asarray(tie, dtype=bool)

    forward = winner * n_sources + loser
    backward = loser * n_sources + winner
    cells = n_sources * n_sources

    def wins_matrix(weights):
        w = np.where(tie, 0.5, 1.0) * weights
        matrix = np.bincount(forward, weights=w, minlength=cells)
        matrix += np.bincount(backward, weights=np.where(tie, w, 0.0), minlength=cells)
        return matrix.reshape(n_sources, n_sources)

    estimate = bradley_terry(wins_matrix(np.ones(len(winner))))
    if len(winner) == 0 or draws == 0:
        return estimate, np.full(n_sources, np.nan), np.full(n_sources, np.nan)
    n_clusters = int(cluster.max()) + 1
    resampled = cluster_resampling(n_clusters, draws, seed)
    boot = np.array(
        [bradley_terry(wins_matrix(resampled[b, cluster].astype(float))) for b in range(draws)]
    )
    tail = (1 - confidence) / 2 * 100
    low = np.nanpercentile(boot, tail, axis=0)
    high = np.nanpercentile(boot, 100 - tail, axis=0)
    return estimate, low, high


def bradley_terry_batch(
    wins: np.ndarray, *, prior: float = 0.01, iterations: int = 50
) -> np.ndarray:
    """`bradley_terry` for a stack of wins matrices at once (draws x sources x sources):
    one batched Newton step per iteration instead of one fit per draw. Every source
    must have played in every matrix; centred to mean zero per matrix."""
    wins = np.asarray(wins, dtype=float)
    games = wins + np.swapaxes(wins, 1, 2)
    n_draws, n_sources, _ = wins.shape
    theta = np.zeros((n_draws, n_sources))
    total_wins = wins.sum(axis=2)
    identity = np.eye(n_sources)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))
        gradient = total_wins - (games * p).sum(axis=2) - prior * theta
        curvature = games * p * (1 - p)
        hessian = identity * (curvature.sum(axis=2) + prior)[:, :, None] - curvature
        step = np.linalg.solve(hessian, gradient[:, :, None])[:, :, 0]
        theta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta - theta.mean(axis=1, keepdims=True)


def separated_sources(wins: np.ndarray) -> np.ndarray:
    """Sources whose Bradley-Terry strength has no finite maximum-likelihood value: they
    won all their games or lost all of them (a tie counts half to each side). Their
    fitted strength is set by the prior alone. Works on one matrix or a stack."""
    wins = np.asarray(wins, dtype=float)
    won = wins.sum(axis=-1)
    lost = wins.sum(axis=-2)
    played = won + lost > 0
    return played & ((won <= 0) | (lost <= 0))


@dataclass
class StrengthEstimates:
    log_strength: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    # "ok", "separated" (no finite estimate: the source won or lost everything),
    # "near_separation" (in more than the interval's tail share of the draws it did,
    # so a bound would be set by the prior), or "not_played".
    status: list


def bradley_terry_estimates(
    winner,
    loser,
    tie,
    cluster,
    n_sources: int,
    *,
    draws: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    annotator=None,
) -> StrengthEstimates:
    """Log-strengths with intervals, for the sources whose strength the data can
    estimate. Separated sources are left out of the fit one at a time until none is left
    (dropping one can separate another), so the remaining strengths are relative to each
    other and not to a prior-driven value.

    The draws resample clusters (cells); a source separated in more than the interval's
    tail share of them is near separation. Without `annotator` the intervals are the
    draws' percentiles; with each comparison's annotator they are two-way (cells,
    annotators) cluster-robust sandwich intervals (`clustered.bradley_terry_two_way`),
    which the percentiles understate when annotators differ in taste."""
    winner, loser, cluster = (np.asarray(a, dtype=np.int64) for a in (winner, loser, cluster))
    tie = np.asarray(tie, dtype=bool)
    forward = winner * n_sources + loser
    backward = loser * n_sources + winner
    half = np.where(tie, 0.5, 1.0)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 1
    size = n_sources * n_sources

    def per_cluster(keep):
        """Each cluster's wins matrix (clusters x sources^2): every draw's wins are then
        one matrix product with the draw's cluster weights."""
        w = half * keep
        table = np.bincount(cluster * size + forward, weights=w, minlength=n_clusters * size)
        table += np.bincount(
            cluster * size + backward, weights=np.where(tie, w, 0.0), minlength=n_clusters * size
        )
        return table.reshape(n_clusters, size)

    def wins_matrices(cluster_weights, keep):
        wins = np.asarray(cluster_weights, dtype=float) @ per_cluster(keep)
        return wins.reshape(len(cluster_weights), n_sources, n_sources)

    status = ["not_played"] * n_sources
    estimate = np.full(n_sources, np.nan)
    low, high = np.full(n_sources, np.nan), np.full(n_sources, np.nan)
    if len(winner) == 0:
        return StrengthEstimates(estimate, low, high, status)
    keep = np.ones(len(winner), dtype=bool)
    active = np.zeros(n_sources, dtype=bool)
    active[winner] = active[loser] = True
    for s in np.flatnonzero(active):
        status[s] = "ok"
    while True:
        wins = wins_matrices(np.ones((1, n_clusters)), keep)[0]
        separated = separated_sources(wins) & active
        if not separated.any():
            break
        for s in np.flatnonzero(separated):
            status[s] = "separated"
        active &= ~separated
        keep &= active[winner] & active[loser]
    index = np.flatnonzero(active)
    if len(index) < 2:
        for s in index:
            status[s] = "separated"
        return StrengthEstimates(estimate, low, high, status)
    sub = np.ix_(index, index)
    estimate[index] = bradley_terry_batch(wins[sub][None])[0]
    if draws == 0:
        return StrengthEstimates(estimate, low, high, status)
    resampled = cluster_resampling(n_clusters, draws, seed)
    boot_wins = wins_matrices(resampled, keep)[:, index][:, :, index]
    # A draw where a source is separated or did not play has no finite strength for it.
    games = (boot_wins + np.swapaxes(boot_wins, 1, 2)).sum(axis=2)
    unusable = separated_sources(boot_wins) | (games <= 0)
    # The draws' own fits are needed only for percentile intervals.
    fitted = bradley_terry_batch(boot_wins) if annotator is None else None
    tail = (1 - confidence) / 2
    if annotator is not None:
        position = np.full(n_sources, -1)
        position[index] = np.arange(len(index))
        sandwich = bradley_terry_two_way(
            estimate[index],
            position[winner[keep]],
            position[loser[keep]],
            tie[keep],
            cluster[keep],
            np.asarray(annotator, dtype=np.int64)[keep],
            confidence=confidence,
        )
    for j, s in enumerate(index):
        if unusable[:, j].mean() > tail:
            status[s] = "near_separation"
            continue
        if annotator is not None:
            low[s], high[s] = sandwich.ci_low[j], sandwich.ci_high[j]
            continue
        assert fitted is not None
        column = fitted[~unusable[:, j], j]
        low[s], high[s] = np.percentile(column, [tail * 100, 100 - tail * 100])
    return StrengthEstimates(estimate, low, high, status)
