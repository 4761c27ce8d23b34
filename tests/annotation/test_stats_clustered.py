"""Two-way (cells, annotators) intervals for alpha and Bradley-Terry strengths: checked
by simulation against the cell-only bootstraps they replace."""

import numpy as np
import pytest

from annotation.stats.agreement import (
    bootstrap_alpha_clustered,
    counts_from_ratings,
    krippendorff_alpha,
)
from annotation.stats.clustered import alpha_two_way
from annotation.stats.estimates import bradley_terry_batch, bradley_terry_estimates

VALUES = [1, 2, 3, 4, 5]


def rated_pairs(rng, *, cells, annotators, leniency, items_per_cell=3, overlap=3):
    """Ratings as this platform collects them: each item (two answers of one cell) is
    rated by `overlap` of the annotators, who differ in leniency (sd `leniency` points).
    Returns (unit, value index, annotator, cell) per rating."""
    items = cells * items_per_cell
    raters = np.argsort(rng.random((items, annotators)), axis=1)[:, :overlap]
    item = np.repeat(np.arange(items), 2 * overlap)
    side = np.tile(np.repeat([0, 1], overlap), items)
    annotator = raters[item, np.tile(np.arange(overlap), 2 * items)]
    unit = item * 2 + side
    cell = item // items_per_cell
    quality = rng.normal(0, 0.4, cells)[cell] + rng.normal(0, 0.8, 2 * items)[unit]
    bias = rng.normal(0, leniency, annotators)[annotator]
    noise = rng.normal(0, 0.6, len(unit))
    value = np.clip(np.round(3 + quality + bias + noise), 1, 5).astype(int)
    return unit, value - 1, annotator, cell


def population_alpha(leniency):
    """Alpha of the design's population: thousands of annotators and cells."""
    rng = np.random.default_rng(0)
    unit, value, _a, _c = rated_pairs(rng, cells=4000, annotators=4000, leniency=leniency)
    return krippendorff_alpha(counts_from_ratings(unit, value, 5), VALUES)


def test_two_way_alpha_covers_when_cell_resampling_does_not():
    """40 annotators who differ strongly in leniency: which annotators took part moves
    alpha, and resampling cells alone does not see it."""
    truth = population_alpha(leniency=1.2)
    rng = np.random.default_rng(1)
    old, new = [], []
    for rep in range(120):
        unit, value, annotator, cell = rated_pairs(rng, cells=100, annotators=40, leniency=1.2)
        estimate = alpha_two_way(unit, value, annotator, cell, VALUES)
        counts = counts_from_ratings(unit, value, 5)
        cell_of_unit = np.zeros(len(counts), dtype=int)
        cell_of_unit[unit] = cell
        cell_only = bootstrap_alpha_clustered(counts, VALUES, cell_of_unit, draws=100, seed=rep)
        assert estimate.alpha == pytest.approx(cell_only.alpha, abs=1e-12)
        old.append(cell_only.ci_low <= truth <= cell_only.ci_high)
        new.append(estimate.ci_low <= truth <= estimate.ci_high)
    # 120 simulated studies (fixed seeds, so the figures are always the same): the
    # binomial standard error of a coverage near 95 % is 2 points, so 0.89 is about three
    # standard errors below nominal; the cell-only interval misses by far more than that.
    assert 0.89 <= np.mean(new) <= 0.99
    assert np.mean(old) <= 0.82


THETA = np.array([-0.6, -0.2, 0.0, 0.3, 0.5])


def compared_pairs(rng, *, cells, annotators, taste, per_cell=6):
    """Decisive comparisons of two random sources; every annotator has a taste of their
    own for each source (sd `taste` in log-strength). (winner, loser, cell, annotator)."""
    n = cells * per_cell
    cell = np.repeat(np.arange(cells), per_cell)
    annotator = rng.integers(0, annotators, n)
    pair = np.argsort(rng.random((n, len(THETA))), axis=1)[:, :2]
    a, b = pair[:, 0], pair[:, 1]
    strength = THETA[None, :] + rng.normal(0, taste, (annotators, len(THETA)))
    a_wins = rng.random(n) < 1 / (1 + np.exp(strength[annotator, b] - strength[annotator, a]))
    return np.where(a_wins, a, b), np.where(a_wins, b, a), cell, annotator


def test_two_way_strengths_cover_when_cell_resampling_does_not():
    # The population's strengths: tastes average out over 20,000 annotators (they also
    # flatten the strengths a little, which is why THETA itself is not the truth).
    winner, loser, _c, _a = compared_pairs(
        np.random.default_rng(0), cells=4000, annotators=20000, taste=0.8, per_cell=50
    )
    wins = np.zeros((5, 5))
    np.add.at(wins, (winner, loser), 1)
    truth = bradley_terry_batch(wins[None])[0]
    rng = np.random.default_rng(1)
    old, new = [], []
    for rep in range(100):
        winner, loser, cell, annotator = compared_pairs(rng, cells=60, annotators=30, taste=0.8)
        tie = np.zeros(len(winner), bool)
        cell_only = bradley_terry_estimates(winner, loser, tie, cell, 5, draws=200, seed=rep)
        two_way = bradley_terry_estimates(
            winner, loser, tie, cell, 5, draws=50, seed=rep, annotator=annotator
        )
        assert np.allclose(two_way.log_strength, cell_only.log_strength)
        old.append((cell_only.ci_low <= truth) & (truth <= cell_only.ci_high))
        new.append((two_way.ci_low <= truth) & (truth <= two_way.ci_high))
    # 500 intervals (100 studies x 5 sources, correlated within a study): a standard
    # error of about 1.5 points near 95 %, so 0.91 is well below what chance explains.
    assert 0.91 <= np.mean(new) <= 0.99
    assert np.mean(old) <= 0.87


def test_two_way_alpha_without_pairable_units_or_annotators():
    nothing = alpha_two_way([], [], [], [], VALUES)
    single = alpha_two_way([0, 1], [0, 3], [0, 1], [0, 0], VALUES)

    assert nothing.n_units == 0 and np.isnan(nothing.alpha)
    assert single.n_units == 0 and np.isnan(single.ci_low)


def test_two_way_alpha_of_one_annotator_pair_in_one_cell_has_no_interval():
    # Two annotators rate every unit, all in one cell: no two cells to compare.
    unit = np.repeat(np.arange(10), 2)
    value = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 0, 1, 1, 1, 2, 3, 3, 3, 4, 4])
    estimate = alpha_two_way(unit, value, np.tile([0, 1], 10), np.zeros(20, int), VALUES)

    assert estimate.alpha == pytest.approx(
        krippendorff_alpha(counts_from_ratings(unit, value, 5), VALUES), abs=1e-12
    )
    assert np.isnan(estimate.ci_low) and np.isnan(estimate.ci_high)


def test_two_way_alpha_takes_any_integers_as_cells_and_annotators():
    """Cells come as character x 1000 + scenario, or minus the item for a diversity set;
    annotators as user ids: only which ratings share one matters."""
    rng = np.random.default_rng(6)
    unit, value, annotator, cell = rated_pairs(rng, cells=30, annotators=12, leniency=0.5)
    plain = alpha_two_way(unit, value, annotator, cell, VALUES)
    renamed = alpha_two_way(
        unit, value, annotator * 7 + 1000, np.where(cell % 2, cell * 1000 + 5, -cell - 1), VALUES
    )

    assert np.isfinite(plain.ci_low)
    assert (renamed.alpha, renamed.ci_low, renamed.ci_high) == pytest.approx(
        (plain.alpha, plain.ci_low, plain.ci_high), abs=1e-12
    )


def test_the_icc_interval_is_around_the_one_way_icc_and_ignores_names():
    from annotation.stats.agreement import icc_1k
    from annotation.stats.icc import icc_two_way

    rng = np.random.default_rng(8)
    unit, value, annotator, cell = rated_pairs(rng, cells=40, annotators=15, leniency=0.5)
    estimate = icc_two_way(unit, value + 1, annotator, cell)
    renamed = icc_two_way(unit * 3 + 7, value + 1, annotator * 5 + 100, cell * 1000 - 4)

    assert estimate.alpha == pytest.approx(
        icc_1k(counts_from_ratings(unit, value, 5), VALUES), abs=1e-12
    )
    assert estimate.ci_low < estimate.alpha < estimate.ci_high <= 1
    assert (renamed.alpha, renamed.ci_low, renamed.ci_high) == pytest.approx(
        (estimate.alpha, estimate.ci_low, estimate.ci_high), abs=1e-12
    )


def test_the_icc_of_five_totals_is_the_one_way_icc():
    """What the jackknife subtracts from: ICC from the totals of the pairable units
    (here of the ratings without one annotator) is ICC(1,k) computed from scratch."""
    from annotation.stats.agreement import icc_1k
    from annotation.stats.icc import _icc_from_totals

    rng = np.random.default_rng(9)
    unit, value, annotator, _cell = rated_pairs(rng, cells=10, annotators=6, leniency=0.5)
    keep = annotator != 2
    counts = counts_from_ratings(unit[keep], value[keep], 5)
    pairable = counts[counts.sum(axis=1) >= 2]
    values = np.arange(1, 6.0)
    m, s, q = pairable.sum(axis=1), pairable @ values, pairable @ values**2
    totals = (len(m), m.sum(), (s**2 / m).sum(), s.sum(), q.sum())

    assert float(_icc_from_totals(*totals)) == pytest.approx(icc_1k(counts, VALUES), abs=1e-12)


def test_a_left_out_icc_is_stepped_to_the_studys_ratings_per_unit():
    """ICC(1,k) is the single-rating ICC(1) stepped up to k0 ratings per unit
    (Spearman-Brown): stepped to its own k0, a set of totals gives its ICC(1,k); stepped to
    more ratings than it has (an annotator left out took some), a higher value, the
    same as ICC(1) stepped by hand."""
    from annotation.stats.icc import _icc_at, _icc_from_totals, _ratings_per_unit

    rng = np.random.default_rng(10)
    unit, value, annotator, _cell = rated_pairs(rng, cells=12, annotators=7, leniency=0.5)
    keep = annotator != 3
    counts = counts_from_ratings(unit[keep], value[keep], 5)
    pairable = counts[counts.sum(axis=1) >= 2]
    values = np.arange(1, 6.0)
    m, s, q = pairable.sum(axis=1), pairable @ values, pairable @ values**2
    totals = (len(m), m.sum(), (s**2 / m).sum(), s.sum(), q.sum(), (m**2).sum())
    own = float(_ratings_per_unit(totals[0], totals[1], totals[5]))
    icc_k = float(_icc_from_totals(*totals[:5]))

    assert 2 < own < 3  # some units lost a rating
    assert float(_icc_at(own, *totals)) == pytest.approx(icc_k, abs=1e-12)
    single = icc_k / (own - (own - 1) * icc_k)  # Spearman-Brown, inverted
    assert float(_icc_at(3.0, *totals)) == pytest.approx(3 * single / (1 + 2 * single), abs=1e-12)
    assert float(_icc_at(3.0, *totals)) > icc_k


def test_the_cr2_jackknife_of_a_mean_is_cr2():
    """Each cluster's squared change times one minus its share of the observations: for
    a mean, the sum over clusters of (summed residuals)^2 / (1 - h_g), over n^2, the
    CR2 variance the means use; with equal clusters, the jackknife's (G - 1) / G."""
    from annotation.stats.clustered import cr2_jackknife_variance

    values = np.array([1.0, 2.0, 4.0, 3.0, 5.0, 2.0, 4.0])
    cluster = np.array([0, 0, 0, 0, 1, 1, 2])
    sizes = np.bincount(cluster)
    without = np.array([values[cluster != g].mean() for g in range(3)])
    variance, _effective = cr2_jackknife_variance(without, values.mean(), sizes)

    sums = np.bincount(cluster, weights=values - values.mean())
    assert variance == pytest.approx((sums**2 / (1 - sizes / 7)).sum() / 49)

    even = np.repeat(np.arange(4), 3)
    values = np.arange(12.0) ** 1.5
    without = np.array([values[even != g].mean() for g in range(4)])
    variance, effective = cr2_jackknife_variance(without, values.mean(), np.bincount(even))
    assert variance == pytest.approx(3 / 4 * ((without - without.mean()) ** 2).sum())
    assert effective == pytest.approx(4)
