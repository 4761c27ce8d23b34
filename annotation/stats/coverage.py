"""How often each interval of the results covers the truth, over simulated studies
(`crowd`): the check that the intervals hold for skewed crowds. The test suite runs a
small version, `bench/coverage.py` a large one."""

import functools
from dataclasses import replace

import numpy as np

from .agreement import counts_from_ratings, icc_1k, krippendorff_alpha
from .arrays import VALUES
from .clustered import alpha_two_way
from .crowd import Crowd, simulate
from .estimates import bradley_terry_batch, bradley_terry_estimates
from .icc import icc_two_way
from .intervals import clustered_proportions, two_way_cluster_means

ESTIMATORS = ("mean", "paired_difference", "win_rate", "alpha", "icc", "bradley_terry")


def _ratings(study):
    """Both answers' ratings of every judgment as one list: unit (item x side), value,
    annotator, cell."""
    unit = np.concatenate([study["item"] * 2, study["item"] * 2 + 1])
    value = np.concatenate([study["likert_left"], study["likert_right"]])
    annotator = np.concatenate([study["annotator"], study["annotator"]])
    cell = np.concatenate([study["cell"], study["cell"]])
    return unit, value, annotator, cell


def _population(crowd: Crowd) -> Crowd:
    """The crowd the truths are computed for: the design's effects, with the study's
    size and workloads left out (they do not move the truths' expectations), so that
    one computation serves every size."""
    return replace(crowd, cells=0, annotators=0, workload_sd=0.0, all_pairs=False)


def population_alpha(crowd: Crowd) -> float:
    return _population_agreement(_population(crowd))[0]


def population_icc(crowd: Crowd) -> float:
    return _population_agreement(_population(crowd))[1]


def population_strengths(crowd: Crowd) -> np.ndarray:
    return _population_strengths(_population(crowd))


@functools.lru_cache(maxsize=8)
def _population_agreement(crowd: Crowd) -> tuple[float, float]:
    """Alpha and ICC of the design's population: thousands of cells and evenly loaded
    annotators (which annotators pair up does not move their expectations)."""
    big = replace(crowd, cells=40_000, annotators=5000)
    unit, value, _a, _c = _ratings(simulate(np.random.default_rng(12345), big))
    counts = counts_from_ratings(unit, value - 1, len(VALUES))
    return krippendorff_alpha(counts, VALUES), icc_1k(counts, VALUES)


@functools.lru_cache(maxsize=8)
def _population_strengths(crowd: Crowd) -> np.ndarray:
    """Bradley-Terry strengths of the population's preferences: tastes average out over
    thousands of annotators."""
    big = replace(crowd, cells=40_000, annotators=5000, all_pairs=True)
    study = simulate(np.random.default_rng(54321), big)
    winner, loser = _decided(study)
    wins = np.zeros((crowd.sources, crowd.sources))
    np.add.at(wins, (winner, loser), 1.0)
    return bradley_terry_batch(wins[None])[0]


def _decided(study):
    left_won = study["left_won"] == 1
    winner = np.where(left_won, study["left"], study["right"])
    loser = np.where(left_won, study["right"], study["left"])
    return winner, loser


def covered(rng, crowd: Crowd) -> dict[str, np.ndarray]:
    """One simulated study per estimator; for each, whether its 95 % intervals cover the
    truth (one flag per compared source, one for alpha, one per source for
    Bradley-Terry): 1.0 or 0.0, NaN where no interval could be made (the results publish
    such a figure as "not enough data", `minimum.enough_for_interval`)."""
    study = simulate(rng, replace(crowd, all_pairs=False))
    levels = crowd.levels()
    out: dict[str, list] = {name: [] for name in ESTIMATORS}
    for source in range(1, crowd.sources):
        mine = study["right"] == source
        cell, annotator = study["cell"][mine], study["annotator"][mine]
        group = np.zeros(int(mine.sum()), dtype=np.int64)
        for name, values, truth in (
            ("mean", study["value_right"][mine], levels[source]),
            (
                "paired_difference",
                study["value_right"][mine] - study["value_left"][mine],
                levels[source] - levels[0],
            ),
        ):
            estimate = two_way_cluster_means(values, group, cell, annotator, 1)
            out[name].append(covers(estimate.ci_low[0], truth, estimate.ci_high[0]))
        ((_s, _n, _d, low, high),) = clustered_proportions(
            1 - study["left_won"][mine], group, cell, annotator, 1
        )
        out["win_rate"].append(covers(low, crowd.true_win_rate(source), high))
    unit, value, annotator, cell = _ratings(study)
    alpha = alpha_two_way(unit, value - 1, annotator, cell, VALUES)
    out["alpha"].append(covers(alpha.ci_low, population_alpha(crowd), alpha.ci_high))
    icc = icc_two_way(unit, value, annotator, cell)
    out["icc"].append(covers(icc.ci_low, population_icc(crowd), icc.ci_high))

    pairs = simulate(rng, replace(crowd, all_pairs=True))
    winner, loser = _decided(pairs)
    strengths = bradley_terry_estimates(
        winner,
        loser,
        np.zeros(len(winner), dtype=bool),
        pairs["cell"],
        crowd.sources,
        draws=20,
        annotator=pairs["annotator"],
    )
    truth = population_strengths(crowd)
    out["bradley_terry"] = [
        covers(low, true, high)
        for low, true, high in zip(strengths.ci_low, truth, strengths.ci_high, strict=True)
    ]
    return {name: np.array(flags, dtype=float) for name, flags in out.items()}


def covers(low, truth, high) -> float:
    """1 or 0; NaN where no interval was made (published as not enough data)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan")
    return float(low <= truth <= high)


def coverage(crowd: Crowd, studies: int, seed: int = 0) -> dict[str, tuple[float, int, int]]:
    """Per estimator, over `studies` simulated studies: the share of the intervals made
    that covered the truth, how many intervals that share is of, and how many figures
    got no interval (too little information: not enough data)."""
    rng = np.random.default_rng(seed)
    flags: dict[str, list] = {name: [] for name in ESTIMATORS}
    for _ in range(studies):
        for name, hits in covered(rng, crowd).items():
            flags[name].append(hits)
    out = {}
    for name, runs in flags.items():
        every = np.concatenate(runs)
        made = every[np.isfinite(every)]
        share = float(made.mean()) if len(made) else float("nan")
        out[name] = (share, len(made), int(len(every) - len(made)))
    return out
