"""The intervals hold when a few annotators do most of the work: coverage over simulated
studies with even and skewed workloads (`annotation.stats.crowd`), small enough for CI;
`bench/coverage.py` runs thousands of studies per setting."""

import math

import numpy as np
import pytest

from annotation.stats.arrays import VALUES
from annotation.stats.clustered import alpha_interval, alpha_left_out
from annotation.stats.coverage import coverage, population_alpha
from annotation.stats.crowd import Crowd, effective_annotators, simulate
from annotation.stats.intervals import (
    Z95,
    _cluster_sums,
    effective_clusters,
    t_quantile,
    two_way_cluster_means,
    wilson_effective,
)

SKEWED = [Crowd(annotators=10, workload_sd=1.0), Crowd(annotators=40, workload_sd=1.5)]
EVEN = [Crowd(annotators=10), Crowd(annotators=40)]


def band(share, intervals, width=3.0, ceiling=0.975):
    """No more than `width` binomial standard errors of `intervals` below nominal 95 %,
    and no more than 97.5 %. The upper side is wider on purpose: the t quantile takes
    the fewer of the effective cells and annotators, which is conservative when the
    annotators' part of the variance is small (about 96.5 % at 10 annotators in
    `bench/coverage.py`); intervals about 1.4 times too wide, as the bootstrap they
    replaced, cover 98 % or more."""
    error = math.sqrt(0.95 * 0.05 / intervals)
    return 0.95 - width * error <= share <= ceiling


@pytest.fixture(scope="module")
def skewed():
    return [coverage(crowd, 300, seed=index) for index, crowd in enumerate(SKEWED)]


def test_skewed_workloads_are_skewed():
    """lognormal sd 1 over 10 annotators leaves about 7 effective ones, sd 1.5 over 40
    about a dozen: the crowds the issue measured."""
    rng = np.random.default_rng(0)
    for crowd, (low, high) in zip(SKEWED, [(6, 8), (9, 16)], strict=True):
        effective = np.mean(
            [
                effective_annotators(simulate(rng, crowd)["annotator"], crowd.annotators)
                for _ in range(30)
            ]
        )
        assert low <= effective <= high


@pytest.mark.parametrize(
    "name", ["mean", "paired_difference", "win_rate", "alpha", "icc", "bradley_terry"]
)
def test_intervals_cover_95_percent_with_skewed_workloads(skewed, name):
    """600 studies (300 at 10 annotators with workload sd 1, 300 at 40 with sd 1.5),
    1,200 intervals of means, paired differences and win rates, 600 of alpha, 1,800 of
    strengths: at most three binomial standard errors (about 1.9, 2.7 and 1.5 points)
    below 95 %. The intervals they replace covered 92.5 %, 92.8 % and 91.8 % for the
    first three in this setting (`test_the_old_intervals_undercover_in_the_same_studies`);
    alpha's old t interval 95.0 and 93.7 % in bench/coverage.py, too close to 95 % for
    this run to tell (`test_the_old_alpha_interval_undercovers`)."""
    share = np.mean([run[name][0] for run in skewed])
    intervals = sum(run[name][1] for run in skewed)
    without = sum(run[name][2] for run in skewed)

    assert band(share, intervals), share
    # Coverage counts the intervals published; the figures left without one ("not
    # enough data") are few here, so that share cannot be bought by withholding them.
    assert without <= 0.02 * (intervals + without), without


@pytest.mark.parametrize("crowd", EVEN, ids=["10 annotators", "40 annotators"])
def test_intervals_still_cover_95_percent_with_even_workloads(crowd):
    shares = coverage(crowd, 200, seed=7)
    for name, (share, intervals, without) in shares.items():
        # Four standard errors: six estimators per setting are checked at once. ICC is
        # conservative at 10 annotators with even workloads (about 97 % in
        # bench/coverage.py), so its ceiling is higher.
        if name == "icc":
            assert band(share, intervals, width=4.0, ceiling=0.99), (name, share)
        else:
            assert band(share, intervals, width=4.0), (name, share)
        assert without <= 0.02 * (intervals + without), (name, without)


def test_one_annotator_per_item_and_skewed_workloads():
    """Each item judged once (overlap 1) and lognormal workloads (sd 1 over 10
    annotators): one annotator can do half of a source's work. About one figure in
    fifteen then has under two effective annotators and no interval (published as not
    enough data); the intervals that are published still cover 95 % (means 94.6 %,
    paired differences 95.4 %, strengths 95.4 % over 300 studies; counted as misses, the
    withheld ones gave 87.8 % for means). Win rates are conservative here (98.7 %: the
    design effect and a t on few degrees of freedom both widen them)."""
    shares = coverage(Crowd(annotators=10, workload_sd=1.0, overlap=1), 300, seed=5)
    for name in ("mean", "paired_difference", "win_rate", "bradley_terry"):
        share, intervals, without = shares[name]
        if name == "win_rate":
            assert 0.95 - 4 * math.sqrt(0.95 * 0.05 / intervals) <= share <= 0.995, share
        else:
            assert band(share, intervals, width=4.0), (name, share)
        assert 0 < without <= 0.15 * (intervals + without), (name, without)


def old_two_way(values, cell, annotator):
    """The interval before: G / (G - 1) per one-way term, min(cells, annotators) - 1
    degrees of freedom, whatever the workloads."""
    group = np.zeros(len(values), dtype=np.int64)
    n = len(values)
    residuals = values - values.mean()
    terms = []
    for cluster in (cell, annotator, cell * 1000 + annotator):
        _owner, sums, _sizes = _cluster_sums(group, cluster, residuals, 1)
        terms.append((sums**2).sum() * len(sums) / (len(sums) - 1))
    variance = terms[0] + terms[1] - terms[2]
    variance = (variance if variance > 0 else max(terms[0], terms[1])) / n**2
    df = min(len(np.unique(cell)), len(np.unique(annotator))) - 1
    return values.mean(), math.sqrt(variance), df


def test_the_old_intervals_undercover_in_the_same_studies():
    """What makes the coverage tests above able to fail: in the same kind of studies the
    old rule misses by more than their tolerance."""
    rng = np.random.default_rng(3)
    hits = {"mean": [], "paired_difference": [], "win_rate": []}
    for crowd in SKEWED:
        levels = crowd.levels()
        for _ in range(300):
            study = simulate(rng, crowd)
            mine = study["right"] == 1
            cell, annotator = study["cell"][mine], study["annotator"][mine]
            right, left = study["value_right"][mine], study["value_left"][mine]
            for name, values, truth in (
                ("mean", right, levels[1]),
                ("paired_difference", right - left, levels[1] - levels[0]),
            ):
                mean, error, df = old_two_way(values, cell, annotator)
                half = float(t_quantile(df)) * error
                hits[name].append(mean - half <= truth <= mean + half)
            won = 1.0 - study["left_won"][mine]
            p, error, _df = old_two_way(won, cell, annotator)
            deff = max(1.0, error**2 / (p * (1 - p) / len(won))) if 0 < p < 1 else 1.0
            low, high = wilson_effective(won.sum(), len(won), deff, Z95)
            hits["win_rate"].append(low <= crowd.true_win_rate(1) <= high)
    for name, flags in hits.items():
        assert not band(np.mean(flags), len(flags)), (name, np.mean(flags))


def old_jackknife_variance(without, clusters: int, sizes) -> tuple[float, float]:
    """The jackknife term alpha's and ICC's intervals used before: (G - 1) / G times the
    spread of the left-out estimates, with the effective number of clusters behind it."""
    finite = np.isfinite(without)
    without, sizes = without[finite], np.asarray(sizes, dtype=float)[finite]
    if clusters < 2 or len(without) < 2:
        return float("nan"), float("nan")
    shares = (clusters - 1) / clusters * (without - without.mean()) ** 2
    m1, m2, m3, m4 = (np.sum(sizes**k) for k in (1, 2, 3, 4))
    effective = effective_clusters(m1, m2, m3, m4, shares.sum(), (sizes * shares).sum())
    return float(shares.sum()), float(effective)


def old_alpha_interval(found):
    """Alpha's interval before: each one-way term the jackknife's (G - 1) / G times the
    spread of the left-out estimates, t on the effective number of cells or annotators
    (the fewer) minus one."""
    terms = [
        old_jackknife_variance(without, len(sizes), sizes) for without, sizes in found.left_out
    ]
    (v_c, e_c), (v_a, e_a), (v_ca, _e) = terms
    variance = v_c + v_a - v_ca
    variance = variance if variance > 0 else max(v_c, v_a)
    half = float(t_quantile(min(e_c, e_a) - 1)) * math.sqrt(variance)
    return found.alpha - half, min(found.alpha + half, 1.0)


def test_the_old_alpha_interval_undercovers():
    """What makes alpha's coverage checks able to fail. The old t interval covered
    92.8-95.0 % in bench/coverage.py, too close to 95 % for a CI-sized run to tell;
    where annotators differ strongly (leniency sd 0.8, taste sd 0.6: bench/coverage.py
    --strong) it covers about 90 % at 10 annotators with even workloads. In 1,000 such
    studies (three standard errors: 2.1 points) the old interval covers 91.0 %, outside
    the band, and the new one, from the same left-out estimates, 95.3 %."""
    crowd = Crowd(annotators=10, leniency_sd=0.8, taste_sd=0.6)
    truth = population_alpha(crowd)
    rng = np.random.default_rng(5)
    old, new = [], []
    for _ in range(1000):
        study = simulate(rng, crowd)
        unit = np.concatenate([study["item"] * 2, study["item"] * 2 + 1])
        value = np.concatenate([study["likert_left"], study["likert_right"]]) - 1
        annotator = np.tile(study["annotator"], 2)
        cell = np.tile(study["cell"], 2)
        found = alpha_left_out(unit, value, annotator, cell, VALUES)
        low, high = old_alpha_interval(found)
        old.append(low <= truth <= high)
        estimate = alpha_interval(found)
        new.append(estimate.ci_low <= truth <= estimate.ci_high)

    assert not band(np.mean(old), len(old)), np.mean(old)
    assert band(np.mean(new), len(new)), np.mean(new)


def test_effective_clusters_of_equal_clusters_is_their_number():
    sizes = np.full(12, 7.0)
    moments = [np.sum(sizes**k) for k in (1, 2, 3, 4)]

    assert effective_clusters(*moments, 5.0, 35.0) == pytest.approx(12)
    assert effective_clusters(*moments, 0.0, 0.0) == pytest.approx(12)


def test_effective_clusters_of_unequal_clusters_by_hand():
    """Sizes 1, 1, 1, 9. Contributions proportional to size (members share nothing):
    Kish's (sum n)^2 / sum n^2 = 144 / 84. Proportional to size squared (members alike):
    (sum n^2)^2 / sum n^4 = 84^2 / 6564."""
    sizes = np.array([1.0, 1.0, 1.0, 9.0])
    moments = [np.sum(sizes**k) for k in (1, 2, 3, 4)]

    by_size = effective_clusters(*moments, np.sum(2 * sizes), np.sum(2 * sizes**2))
    by_square = effective_clusters(*moments, np.sum(sizes**2), np.sum(sizes**3))

    assert by_size == pytest.approx(144 / 84)
    assert by_square == pytest.approx(84**2 / 6564)


def test_cr2_variance_of_a_mean_by_hand():
    """Every observation in a cell of its own, so that the cell and the intersection
    terms cancel and the two-way variance is the annotators' CR2 variance: the sum over
    annotators of (sum of their residuals)^2 / (1 - n_g / n), over n^2."""
    values = np.array([1.0, 2.0, 4.0, 3.0, 5.0, 2.0, 4.0])
    annotator = np.array([0, 0, 0, 0, 1, 1, 2])
    cell = np.arange(7)
    estimate = two_way_cluster_means(values, np.zeros(7, int), cell, annotator, 1)

    residuals = values - values.mean()
    sums = np.array([residuals[:4].sum(), residuals[4:6].sum(), residuals[6]])
    sizes = np.array([4, 2, 1])
    expected = (sums**2 / (1 - sizes / 7)).sum() / 49
    assert estimate.standard_error[0] ** 2 == pytest.approx(expected)
