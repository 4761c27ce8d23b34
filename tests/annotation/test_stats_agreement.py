"""Agreement statistics against the reference implementation (`krippendorff`)."""

import krippendorff
import numpy as np
import pytest

from annotation.stats.agreement import (
    bootstrap_alpha,
    counts_from_ratings,
    icc_1k,
    krippendorff_alpha,
    within_one,
)

VALUES = [1, 2, 3, 4, 5]


def counts_of(reliability_data, values=VALUES):
    """raters x units matrix (NaN = missing) -> units x values counts."""
    data = np.asarray(reliability_data, dtype=float)
    counts = np.zeros((data.shape[1], len(values)), dtype=np.int64)
    for unit in range(data.shape[1]):
        for value in data[:, unit]:
            if not np.isnan(value):
                counts[unit, values.index(int(value))] += 1
    return counts


# Krippendorff (2011), section C: four coders, 12 units, values 1-5, missing data.
PUBLISHED = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]


@pytest.mark.parametrize(
    "level,expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_the_published_worked_example(level, expected):
    ours = krippendorff_alpha(counts_of(PUBLISHED), VALUES, level)

    reference = krippendorff.alpha(reliability_data=PUBLISHED, level_of_measurement=level)
    assert ours == pytest.approx(reference, abs=1e-9)
    assert ours == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_random_incomplete_data_matches_the_reference_to_1e_9(seed, level):
    rng = np.random.default_rng(seed)
    raters, units = rng.integers(2, 9), rng.integers(5, 80)
    data = rng.integers(1, 6, size=(raters, units)).astype(float)
    data[rng.random(data.shape) < rng.uniform(0.1, 0.6)] = np.nan

    ours = krippendorff_alpha(counts_of(data), VALUES, level)

    reference = krippendorff.alpha(
        reliability_data=data, level_of_measurement=level, value_domain=VALUES
    )
    assert ours == pytest.approx(reference, abs=1e-9)


def test_count_tables_are_built_without_a_rater_matrix():
    counts = counts_from_ratings(np.array([0, 0, 1, 1, 1]), np.array([0, 4, 2, 2, 3]), 5)

    assert counts.tolist() == [[1, 0, 0, 0, 1], [0, 0, 2, 1, 0]]


def test_all_equal_values_leave_alpha_undefined():
    counts = counts_of([[3, 3, 3], [3, 3, 3]])

    assert np.isnan(krippendorff_alpha(counts, VALUES, "ordinal"))
    assert within_one(counts, VALUES) == 1.0


def test_one_rater_gives_no_pairable_unit():
    counts = counts_of([[1, 2, 3, 4]])

    assert np.isnan(krippendorff_alpha(counts, VALUES, "interval"))
    assert bootstrap_alpha(counts, VALUES).n_units == 0


def test_no_data_at_all():
    counts = np.zeros((0, 5), dtype=np.int64)

    assert np.isnan(krippendorff_alpha(counts, VALUES))
    assert np.isnan(icc_1k(counts, VALUES))


def test_the_bootstrap_interval_surrounds_the_estimate():
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, size=200)
    data = np.clip(truth + rng.integers(-1, 2, size=(3, 200)), 1, 5)

    estimate = bootstrap_alpha(counts_of(data), VALUES, "ordinal", draws=500, seed=1)

    assert estimate.ci_low < estimate.alpha < estimate.ci_high
    assert 0.5 < estimate.alpha < 1
    assert estimate.n_units == 200


def test_within_one_counts_close_pairs():
    # unit 1: (1, 2) close; unit 2: (1, 5) far; unit 3: (3, 3, 4) all three pairs close.
    counts = counts_of([[1, 1, 3], [2, 5, 3], [np.nan, np.nan, 4]])

    assert within_one(counts, VALUES) == pytest.approx(4 / 5)


def test_icc_matches_the_textbook_formula_on_balanced_data():
    data = np.array(
        [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    ).T
    values = list(range(1, 11))
    counts = counts_of(data, values)
    # Shrout & Fleiss (1979) data, targets x judges; ICC(1,k) = (BMS - WMS) / BMS.
    targets = data.T
    k = targets.shape[1]
    bms = k * ((targets.mean(axis=1) - targets.mean()) ** 2).sum() / (len(targets) - 1)
    wms = ((targets - targets.mean(axis=1, keepdims=True)) ** 2).sum() / (len(targets) * (k - 1))

    assert icc_1k(counts, values) == pytest.approx((bms - wms) / bms, abs=1e-12)
    assert icc_1k(counts, values) == pytest.approx(0.443, abs=1e-3)
