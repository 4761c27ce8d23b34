"""Cluster-robust intervals, the minimum-information rule, Bradley-Terry under
separation, and cell-clustered alpha: pure functions, checked by simulation."""

import numpy as np
import pytest

from annotation.stats.agreement import (
    alpha_batch,
    alpha_from_coincidences,
    bootstrap_alpha_clustered,
    counts_from_ratings,
    krippendorff_alpha,
)
from annotation.stats.estimates import (
    bradley_terry,
    bradley_terry_batch,
    bradley_terry_estimates,
    cluster_bootstrap_means,
    separated_sources,
)
from annotation.stats.figures import estimate_table
from annotation.stats.intervals import (
    Z95,
    _erf,
    clustered_proportions,
    fiducial_half_width,
    t_quantile,
    two_way_cluster_means,
    wilson_effective,
)
from annotation.stats.minimum import enough_for_interval, enough_information
from annotation.stats.rules import Rules

# Student t 97.5 % quantiles (from tables).
T_TABLE = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 10: 2.2281, 30: 2.0423}


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_t_quantiles_match_the_tables(df):
    assert float(t_quantile(df)) == pytest.approx(T_TABLE[df], abs=0.005)


def crossed_design(rng, *, cells=60, annotators=30, per_cell=3, mu=0.3):
    """Paired differences as this platform collects them: every cell (character x
    scenario) judged by a few of many annotators, with cell and annotator effects."""
    cell = np.repeat(np.arange(cells), per_cell)
    annotator = rng.integers(0, annotators, size=len(cell))
    values = (
        mu
        + rng.normal(0, 0.5, cells)[cell]
        + rng.normal(0, 0.3, annotators)[annotator]
        + rng.normal(0, 1.0, len(cell))
    )
    return values, cell, annotator


def test_two_way_intervals_cover_the_truth_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    covered = []
    for _ in range(1000):
        values, cell, annotator = crossed_design(rng)
        estimate = two_way_cluster_means(values, np.zeros(len(values), int), cell, annotator, 1)
        covered.append(estimate.ci_low[0] <= 0.3 <= estimate.ci_high[0])
    # 1,000 simulated studies: the binomial standard error of the coverage is 0.7 points.
    assert 0.93 <= np.mean(covered) <= 0.97


def test_resampling_cells_and_annotators_independently_overcovers():
    """What the two-way intervals replace: the pigeonhole bootstrap gives each rating a
    weight of variance about 3, so its intervals are too wide in this design."""
    rng = np.random.default_rng(7)
    covered, ratio = [], []
    for _ in range(150):
        values, cell, annotator = crossed_design(rng)
        group = np.zeros(len(values), int)
        boot = cluster_bootstrap_means(values, group, cell, annotator, 1, draws=400, seed=1)
        robust = two_way_cluster_means(values, group, cell, annotator, 1)
        covered.append(boot.ci_low[0] <= 0.3 <= boot.ci_high[0])
        ratio.append((boot.ci_high[0] - boot.ci_low[0]) / (robust.ci_high[0] - robust.ci_low[0]))
    assert np.mean(covered) >= 0.975
    assert np.median(ratio) > 1.25


def test_one_judgment_has_no_interval():
    estimate = two_way_cluster_means([3.0], [0], [0], [0], 1)

    assert estimate.mean[0] == 3.0
    assert np.isnan(estimate.ci_low[0]) and np.isnan(estimate.ci_high[0])
    assert not enough_information(
        estimate.n[0], estimate.annotators[0], min_judgments=10, min_annotators=5
    )


def test_zero_variance_gives_a_zero_width_interval_at_the_mean():
    cell = np.repeat(np.arange(12), 2)
    annotator = np.tile(np.arange(6), 4)
    estimate = two_way_cluster_means(np.full(24, 4.0), np.zeros(24, int), cell, annotator, 1)

    assert estimate.ci_low[0] == estimate.ci_high[0] == 4.0
    assert enough_information(
        estimate.n[0], estimate.annotators[0], min_judgments=10, min_annotators=5
    )


def test_one_annotator_has_no_two_way_interval():
    estimate = two_way_cluster_means(
        np.arange(20) % 5 + 1.0, np.zeros(20, int), np.arange(20), np.zeros(20, int), 1
    )

    assert estimate.annotators[0] == 1
    assert np.isnan(estimate.ci_low[0])


def test_an_empty_group_and_no_data_at_all():
    some = two_way_cluster_means([1.0, 2.0], [0, 0], [0, 1], [0, 1], 2)
    none = two_way_cluster_means([], [], [], [], 3)

    assert some.n[1] == 0 and np.isnan(some.mean[1])
    assert len(none.mean) == 3 and np.isnan(none.mean).all() and (none.n == 0).all()


def test_the_minimum_information_rule_needs_both_judgments_and_annotators():
    rule = {"min_judgments": 10, "min_annotators": 5}

    assert list(enough_information([9, 10, 50, 50], [5, 5, 4, 5], **rule)) == [
        False,
        True,
        False,
        True,
    ]


def test_clustered_proportions_widen_wilson_by_the_design_effect():
    rng = np.random.default_rng(3)
    cell = np.repeat(np.arange(40), 5)
    annotator = rng.integers(0, 20, len(cell))
    # Outcomes shared within a cell: strongly clustered.
    outcome = (rng.random(40) < 0.6)[cell]

    ((successes, n, deff, low, high),) = clustered_proportions(
        outcome, np.zeros(len(cell), int), cell, annotator, 1
    )
    plain = wilson_effective(successes, n)

    assert n == 200 and successes == outcome.sum()
    assert deff > 3
    assert high - low > 1.5 * (plain[1] - plain[0])
    assert low < successes / n < high


def test_bradley_terry_batch_matches_one_fit_at_a_time():
    rng = np.random.default_rng(5)
    wins = rng.integers(1, 20, size=(4, 5, 5)).astype(float)
    for w in wins:
        np.fill_diagonal(w, 0)

    batch = bradley_terry_batch(wins)

    for b in range(4):
        assert np.allclose(batch[b], bradley_terry(wins[b]), atol=1e-8)


def test_a_source_that_wins_every_comparison_is_not_estimable():
    rng = np.random.default_rng(1)
    winner, loser, cluster = [], [], []
    # Sources 0-2 beat each other back and forth; source 3 beats everyone, always.
    for c in range(60):
        a, b = rng.choice(3, size=2, replace=False)
        winner.append(a), loser.append(b), cluster.append(c)
        winner.append(3), loser.append(int(rng.integers(0, 3))), cluster.append(c)

    estimates = bradley_terry_estimates(
        winner, loser, np.zeros(len(winner), bool), cluster, 4, draws=300, seed=2
    )

    assert estimates.status == ["ok", "ok", "ok", "separated"]
    assert np.isnan(estimates.log_strength[3]) and np.isnan(estimates.ci_low[3])
    assert np.isfinite(estimates.log_strength[:3]).all()
    assert (estimates.ci_low[:3] < estimates.log_strength[:3]).all()
    assert abs(estimates.log_strength[:3].sum()) < 1e-9


def test_a_source_that_almost_always_wins_has_no_interval():
    winner, loser, cluster = [], [], []
    for c in range(40):
        winner += [0, 1, 2]
        loser += [1, 2, 0]
        cluster += [c, c, c]
    # Source 3 loses once and wins 12 times: most resamples separate it.
    winner += [3] * 12 + [0]
    loser += [0, 1, 2] * 4 + [3]
    cluster += [*list(range(12)), 12]

    estimates = bradley_terry_estimates(
        winner, loser, np.zeros(len(winner), bool), cluster, 4, draws=400, seed=3
    )

    assert estimates.status[3] == "near_separation"
    assert np.isfinite(estimates.log_strength[3]) and np.isnan(estimates.ci_low[3])


def test_separation_is_found_in_one_matrix_and_in_a_stack():
    wins = np.array([[0, 3, 2], [1, 0, 1], [0, 0, 0]], dtype=float)

    assert list(separated_sources(wins)) == [False, False, True]
    assert separated_sources(np.stack([wins, wins.T])).tolist() == [
        [False, False, True],
        [False, False, True],
    ]


def test_no_comparisons_at_all():
    estimates = bradley_terry_estimates([], [], [], [], 2, draws=10)

    assert estimates.status == ["not_played", "not_played"]


def test_alpha_batch_equals_alpha_one_matrix_at_a_time():
    rng = np.random.default_rng(9)
    stack = rng.integers(0, 9, size=(6, 5, 5)).astype(float)
    stack = stack + np.swapaxes(stack, 1, 2)
    values = np.arange(1, 6, dtype=float)

    for level in ("ordinal", "interval", "nominal"):
        expected = [alpha_from_coincidences(c, values, level) for c in stack]
        assert np.allclose(alpha_batch(stack, values, level), expected)


def test_cell_clustered_alpha_has_the_same_point_as_krippendorff():
    rng = np.random.default_rng(4)
    units, values = np.repeat(np.arange(90), 3), None
    truth = rng.integers(1, 6, 90)
    values = np.clip(truth[units] + rng.integers(-1, 2, len(units)), 1, 5)
    counts = counts_from_ratings(units, values - 1, 5)
    cells = np.arange(90) // 3

    estimate = bootstrap_alpha_clustered(counts, [1, 2, 3, 4, 5], cells, draws=500, seed=1)

    assert estimate.alpha == pytest.approx(krippendorff_alpha(counts, [1, 2, 3, 4, 5]), abs=1e-12)
    assert estimate.ci_low < estimate.alpha < estimate.ci_high
    assert estimate.n_units == 90


def test_cell_clustered_alpha_without_pairable_units():
    counts = np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0]])

    estimate = bootstrap_alpha_clustered(counts, [1, 2, 3, 4, 5], np.array([0, 1]), draws=10)

    assert estimate.n_units == 0 and np.isnan(estimate.alpha)


def test_the_dense_and_the_sorted_sums_agree(monkeypatch):
    from annotation.stats import intervals

    rng = np.random.default_rng(11)
    values, cell, annotator = crossed_design(rng)
    group = rng.integers(0, 4, len(values))
    dense = two_way_cluster_means(values, group, cell, annotator, 4)
    monkeypatch.setattr(intervals, "DENSE_KEYS", 0)
    sorted_ = two_way_cluster_means(values, group, cell, annotator, 4)

    assert np.allclose(dense.ci_low, sorted_.ci_low) and np.allclose(dense.ci_high, sorted_.ci_high)
    assert (dense.cells == sorted_.cells).all() and (dense.annotators == sorted_.annotators).all()


def test_the_sliced_dense_sums_agree_with_one_dense_table(monkeypatch):
    from annotation.stats import intervals

    rng = np.random.default_rng(12)
    values, cell, annotator = crossed_design(rng)
    group = rng.integers(0, 4, len(values))
    whole = two_way_cluster_means(values, group, cell, annotator, 4)
    # Room for one group at a time: four slices of the (group, cluster) table.
    monkeypatch.setattr(intervals, "DENSE_KEYS", 200)
    sliced = two_way_cluster_means(values, group, cell, annotator, 4)

    assert np.allclose(whole.ci_low, sliced.ci_low) and np.allclose(whole.ci_high, sliced.ci_high)
    assert (whole.cells == sliced.cells).all() and (whole.annotators == sliced.annotators).all()


def test_a_win_rate_of_every_judgment_is_as_wide_as_its_few_annotators_allow():
    """662 wins of 662 judgments by 10 annotators (workloads 10 to 121): at p = 1 the data
    say nothing about how alike an annotator's judgments are, so the effective sample
    size is the effective number of annotators (Kish), not 662 as with a design effect
    of 1, which gave [0.9942, 1]."""
    workloads = np.array([10, 20, 30, 40, 50, 60, 80, 100, 151, 121])
    annotator = np.repeat(np.arange(10), workloads)
    cell = np.arange(662) % 221

    ((wins, n, deff, low, high),) = clustered_proportions(
        np.ones(662), np.zeros(662, int), cell, annotator, 1
    )

    effective = workloads.sum() ** 2 / (workloads**2).sum()
    t = float(t_quantile(effective - 1))
    assert (wins, n) == (662, 662)
    assert deff == pytest.approx(662 / effective)
    # Wilson's lower bound at p = 1 on n_eff observations with quantile t.
    assert low == pytest.approx(effective / (effective + t * t))
    assert low < 0.7 and high == 1.0


def test_proportions_use_t_as_korn_and_graubard_do():
    """Wilson on n / deff with Student's t is Wilson on Korn and Graubard's df-adjusted
    n* = n / deff (z / t)^2 with z; with 6 annotators t on 5 degrees of freedom is 31 %
    wider than z."""
    rng = np.random.default_rng(8)
    cell = np.repeat(np.arange(50), 3)
    annotator = np.tile(np.arange(6), 25)
    outcome = rng.random(150) < 0.7

    ((wins, n, deff, low, high),) = clustered_proportions(
        outcome, np.zeros(150, int), cell, annotator, 1
    )

    t = float(t_quantile(5))
    assert t / Z95 == pytest.approx(1.312, abs=1e-3)
    adjusted = n / deff * (Z95 / t) ** 2
    assert (low, high) == pytest.approx(wilson_effective(wins / n * adjusted, adjusted, 1.0, Z95))
    assert (low, high) == pytest.approx(wilson_effective(wins, n, deff, t))


@pytest.mark.parametrize(("df", "exact"), [(2.5, 3.5746548), (3.7, 2.8675207), (9.3, 2.2510822)])
def test_t_quantiles_at_fractional_degrees_of_freedom(df, exact):
    # Exact values by numerical integration of the t density.
    assert float(t_quantile(df)) == pytest.approx(exact, abs=1e-4)


@pytest.mark.parametrize(
    ("df", "exact"),
    [(1, 12.7062047), (2, 4.3026527), (2.5, 3.5746548), (3.7, 2.8675207), (9.3, 2.2510822)],
)
def test_the_fiducial_interval_of_one_variance_is_student_t(df, exact):
    assert fiducial_half_width([4.0], [df], [1]) == pytest.approx(2 * exact, rel=1e-6)


def test_the_fiducial_interval_of_a_difference_matches_its_monte_carlo():
    """V = V1 + V2 - V3 with 59, 9 and 305 degrees of freedom, as alpha's cell, annotator
    and intersection terms at 10 annotators: the quantile of |Z| sqrt(V*) over a million
    draws of the three chi-squares (erf over Z), within their error of 0.1 %. The
    difference nearly cancels, so the interval is wider than t on the annotators' 9
    degrees of freedom: V is nearly as uncertain as V2."""
    variances, dfs = np.array([0.0021, 0.0041, 0.0029]), np.array([59.0, 9.0, 305.0])
    half = fiducial_half_width(variances, dfs, [1, 1, -1])

    rng = np.random.default_rng(0)
    draws = 1_000_000
    spread = sum(
        sign * v * df / rng.chisquare(df, draws)
        for v, df, sign in zip(variances, dfs, [1, 1, -1], strict=True)
    )
    covered = lambda h: np.mean(  # noqa: E731
        np.where(spread > 0, _erf(h / np.sqrt(2 * np.abs(spread))), 1.0)
    )
    assert covered(half * 0.999) < 0.95 < covered(half * 1.001)
    # About Student's t on 7 degrees of freedom.
    standard_error = np.sqrt(variances @ [1, 1, -1])
    assert float(t_quantile(8)) < half / standard_error < float(t_quantile(6))


def test_the_fiducial_interval_needs_a_degree_of_freedom_per_term_and_some_variance():
    assert np.isnan(fiducial_half_width([1.0, 1.0], [5.0, 0.5], [1, 1]))
    assert np.isnan(fiducial_half_width([1.0], [np.nan], [1]))
    assert np.isnan(fiducial_half_width([0.0, 1.0], [5.0, 5.0], [1, -1]))


# Six annotators, one of whom did half of the judgments (from a simulated study): too
# little independent information for any interval.
CONCENTRATED_VALUES = [5.0, 3, 4, 4, 5, 4, 4, 4, 5, 4, 4, 4, 4, 5]
CONCENTRATED_CELLS = [0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 7]
CONCENTRATED_ANNOTATORS = [4, 2, 2, 3, 4, 0, 4, 0, 4, 0, 1, 5, 4, 4]


def test_work_concentrated_in_one_annotator_is_not_enough_data():
    n = len(CONCENTRATED_VALUES)
    estimates = two_way_cluster_means(
        CONCENTRATED_VALUES, np.zeros(n, int), CONCENTRATED_CELLS, CONCENTRATED_ANNOTATORS, 1
    )
    rules = Rules(draws=0, seed=0, min_judgments=5, min_annotators=3)

    (row,) = estimate_table(estimates, rules)

    assert estimates.annotators[0] == 6 and estimates.effective_annotators[0] < 2
    assert row["enough_data"] is False
    assert row["ci_low"] is None and row["ci_high"] is None
    assert row["mean"] == pytest.approx(np.mean(CONCENTRATED_VALUES))
    assert row["annotators"] == 6 and row["n"] == n


def test_enough_data_always_comes_with_both_bounds():
    enough = np.array([True, True, True, False])
    low = np.array([1.0, np.nan, 1.0, 1.0])
    high = np.array([2.0, 2.0, np.inf, 2.0])

    assert enough_for_interval(enough, low, high).tolist() == [True, False, False, False]
