import numpy as np
import pytest

from annotation.stats.estimates import (
    bradley_terry,
    bradley_terry_bootstrap,
    cluster_bootstrap_means,
    wilson_interval,
)


def test_group_means_and_counts_are_exact():
    values = [1, 2, 3, 5, 5]
    result = cluster_bootstrap_means(
        values, [0, 0, 0, 1, 1], [0, 1, 2, 0, 1], [0, 1, 0, 1, 0], 3, draws=50
    )

    assert result.mean[:2].tolist() == [2.0, 5.0]
    assert result.n.tolist() == [3, 2, 0]
    assert np.isnan(result.mean[2])


def test_the_interval_covers_the_true_mean_and_shrinks_with_more_data():
    rng = np.random.default_rng(3)

    def simulate(cells):
        cell = np.repeat(np.arange(cells), 3)
        annotator = rng.integers(0, 30, size=len(cell))
        cell_effect = rng.normal(0, 0.5, size=cells)[cell]
        annotator_effect = rng.normal(0, 0.3, size=30)[annotator]
        values = 3.0 + cell_effect + annotator_effect + rng.normal(0, 0.5, size=len(cell))
        return cluster_bootstrap_means(
            values, np.zeros(len(cell), int), cell, annotator, 1, draws=300, seed=1
        )

    small, large = simulate(40), simulate(400)

    assert small.ci_low[0] < 3.0 < small.ci_high[0]
    assert (large.ci_high[0] - large.ci_low[0]) < (small.ci_high[0] - small.ci_low[0])


def test_clustered_data_gets_a_wider_interval_than_independent_ratings_would():
    rng = np.random.default_rng(5)
    cells = 100
    cell = np.repeat(np.arange(cells), 10)
    values = rng.normal(0, 1, size=cells)[cell] + rng.normal(0, 0.1, size=len(cell))
    naive_half_width = 1.96 * values.std(ddof=1) / np.sqrt(len(values))

    result = cluster_bootstrap_means(
        values, np.zeros(len(cell), int), cell, np.zeros(len(cell), int), 1, draws=400
    )

    assert (result.ci_high[0] - result.ci_low[0]) / 2 > 2 * naive_half_width


def test_wilson_interval_known_values():
    low, high = wilson_interval(8, 10)

    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    assert all(np.isnan(wilson_interval(0, 0)))


def test_bradley_terry_recovers_the_order_of_known_strengths():
    rng = np.random.default_rng(0)
    true = np.array([1.0, 0.0, -1.0])
    wins = np.zeros((3, 3))
    for _ in range(3000):
        i, j = rng.choice(3, size=2, replace=False)
        p = 1 / (1 + np.exp(true[j] - true[i]))
        if rng.random() < p:
            wins[i, j] += 1
        else:
            wins[j, i] += 1

    estimate = bradley_terry(wins)

    assert np.argsort(-estimate).tolist() == [0, 1, 2]
    assert estimate == pytest.approx(true, abs=0.15)
    assert estimate.mean() == pytest.approx(0, abs=1e-9)


def test_bradley_terry_with_ties_and_a_source_that_never_played():
    wins = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]], dtype=float)

    estimate = bradley_terry(wins)

    assert estimate[0] > estimate[1]
    assert np.isnan(estimate[2])


def test_bradley_terry_bootstrap_intervals_contain_the_estimate():
    rng = np.random.default_rng(2)
    winner, loser, tie, cluster = [], [], [], []
    for k in range(400):
        a, b = 0, 1 + k % 2
        win = rng.random() < (0.7 if b == 1 else 0.4)
        winner.append(a if win else b)
        loser.append(b if win else a)
        tie.append(rng.random() < 0.1)
        cluster.append(k // 4)

    estimate, low, high = bradley_terry_bootstrap(winner, loser, tie, cluster, 3, draws=200)

    assert np.all(low <= estimate + 1e-12) and np.all(estimate <= high + 1e-12)


def test_the_dense_and_the_sparse_bootstrap_agree(monkeypatch):
    import annotation.stats.estimates as estimates

    rng = np.random.default_rng(11)
    n = 3000
    args = (
        rng.integers(1, 6, size=n).astype(float),
        rng.integers(0, 4, size=n),
        rng.integers(0, 60, size=n),
        rng.integers(0, 25, size=n),
        4,
    )

    dense = cluster_bootstrap_means(*args, draws=100, seed=4)
    monkeypatch.setattr(estimates, "DENSE_LIMIT", 0)
    sparse = cluster_bootstrap_means(*args, draws=100, seed=4)

    assert np.allclose(dense.ci_low, sparse.ci_low) and np.allclose(dense.ci_high, sparse.ci_high)
    assert np.allclose(dense.mean, sparse.mean)


def test_cluster_draws_are_those_of_a_fresh_generator_and_cannot_be_changed():
    from annotation.stats.arrays import cluster_resampling

    drawn = cluster_resampling(37, 50, 5)
    fresh = np.random.default_rng(5).multinomial(37, np.full(37, 1 / 37), size=50)

    assert np.array_equal(drawn, fresh)
    assert (drawn.sum(axis=1) == 37).all()
    assert cluster_resampling(37, 50, 5) is drawn
    assert not np.array_equal(cluster_resampling(37, 50, 6), drawn)
    with pytest.raises(ValueError):
        drawn[0, 0] = 0
