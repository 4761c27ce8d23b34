"""Which degrees of freedom the means' and paired differences' t intervals should have:
the platform's rule against two simpler ones, on the simulated studies of
`bench/coverage.py` (`annotation.stats.crowd`), with the variance the results publish
(two-way cluster-robust, CR2 per term) and only the t quantile changed.

- fitted (the platform's, `intervals.effective_clusters`): the effective number of cells
  or annotators, the fewer, minus one; each cluster weighted by its expected share of
  the variance, fitted to its size and contribution, so that annotators who differ a lot
  and did most of the work count as few;
- Kish: the same with the annotators' count taken as Kish's effective number (their
  workloads only, as if annotators did not differ), minus one;
- count: the number of annotators (or cells), the fewer, minus one;
- BM: Bell and McCaffrey's degrees of freedom for CR2 (Imbens and Kolesar 2016), exact
  for an intercept-only model under the working model the fitted rule fits (each
  cluster's members sharing a part b beside noise a): (tr K)^2 / tr K^2, K the G x G
  matrix of the clusters' adjusted sums after the mean is estimated; G - 1 with equal
  clusters, more than the fitted rule's count minus one when workloads are skewed.

A last column, "apart", is the fitted rule's coverage with each study's error set
against another study's standard error and degrees of freedom: what coverage would be if
the error and its estimated spread were independent, as Student's t assumes. Where it is
lower than "fitted", part of the over-coverage comes from their dependence (a heavy
annotator's leniency moves both the mean and the spread), which no count of degrees of
freedom can remove.

Prints the share of 95 % intervals that covered the truth per setting, with the crowd of
`bench/coverage.py` and with annotators who differ twice as much (`--strong` there). The
figures answer whether a simpler rule would hold where the fitted one is conservative.

    .venv/bin/python bench/coverage_df.py [STUDIES]
"""

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.crowd import Crowd, effective_annotators, simulate
from annotation.stats.intervals import t_quantile, two_way_cluster_means

SETTINGS = [(10, 0.0), (10, 1.0), (40, 0.0), (40, 1.5)]
RULES = ("fitted", "Kish", "count", "BM")


def errors(crowd: Crowd, studies: int, seed: int) -> dict[str, np.ndarray]:
    """Per figure (means, paired differences) and study: the estimate's error, its
    standard error and the three rules' degrees of freedom."""
    rng = np.random.default_rng(seed)
    levels = crowd.levels()
    rows: dict[str, list] = {"mean": [], "paired difference": []}
    for _ in range(studies):
        study = simulate(rng, crowd)
        for source in range(1, crowd.sources):
            mine = study["right"] == source
            annotator, cell = study["annotator"][mine], study["cell"][mine]
            kish = effective_annotators(annotator, crowd.annotators)
            for name, values, truth in (
                ("mean", study["value_right"][mine], levels[source]),
                (
                    "paired difference",
                    study["value_right"][mine] - study["value_left"][mine],
                    levels[source] - levels[0],
                ),
            ):
                group = np.zeros(int(mine.sum()), dtype=np.int64)
                found = two_way_cluster_means(values, group, cell, annotator, 1)
                cells = found.effective_cells[0]
                rows[name].append(
                    (
                        found.mean[0] - truth,
                        found.standard_error[0],
                        min(cells, found.effective_annotators[0]) - 1,
                        min(cells, kish) - 1,
                        min(found.cells[0], found.annotators[0]) - 1,
                        min(
                            bell_mccaffrey_df(cell, values - values.mean()),
                            bell_mccaffrey_df(annotator, values - values.mean()),
                        ),
                    )
                )
    return {name: np.array(found) for name, found in rows.items()}


def bell_mccaffrey_df(cluster, residuals) -> float:
    """Bell and McCaffrey's degrees of freedom of a mean's one-way CR2 variance, under the
    working covariance a I + b (same cluster) with a and b fitted as
    `intervals.effective_clusters` fits them. K's diagonal and low-rank parts give its
    traces in closed form (`check_bell_mccaffrey` compares them with the dense matrices
    at every run)."""
    _, inverse = np.unique(cluster, return_inverse=True)
    sizes = np.bincount(inverse).astype(float)
    if len(sizes) < 2:
        return float("nan")
    n = sizes.sum()
    adjusted = np.bincount(inverse, weights=residuals) ** 2 / (1 - sizes / n)
    a, b = _working_model(sizes, adjusted)
    c = 1 / np.sqrt(1 - sizes / n)
    diagonal = c**2 * (a * sizes + b * sizes**2)
    x, y = c * sizes, c * sizes**2
    alpha, beta = -a / n + b * (sizes**2).sum() / n**2, b / n
    sxx, sxy, syy = (x * x).sum(), (x * y).sum(), (y * y).sum()
    trace = diagonal.sum() + alpha * sxx - 2 * beta * sxy
    low_rank_diagonal = alpha * x**2 - 2 * beta * x * y
    trace_of_square = (
        (diagonal**2).sum()
        + 2 * (diagonal * low_rank_diagonal).sum()
        + alpha**2 * sxx**2
        - 4 * alpha * beta * sxx * sxy
        + beta**2 * 2 * (syy * sxx + sxy**2)
    )
    return float(trace**2 / trace_of_square)


def _bell_mccaffrey_dense(sizes, a: float, b: float) -> float:
    """The same degrees of freedom from the N x N matrices themselves."""
    owner = np.repeat(np.arange(len(sizes)), sizes)
    n = len(owner)
    same = owner[:, None] == owner[None, :]
    covariance = a * np.eye(n) + b * same
    residual_maker = np.eye(n) - 1 / n
    member = owner[:, None] == np.arange(len(sizes))[None, :]
    weights = member / np.sqrt(1 - sizes[owner] / n)[:, None] / n
    k = weights.T @ residual_maker @ covariance @ residual_maker @ weights
    return float(np.trace(k) ** 2 / np.trace(k @ k))


def check_bell_mccaffrey() -> None:
    """The closed form against the dense matrices, on skewed clusters."""
    sizes = np.array([40, 3, 3, 2, 2, 1, 1, 1, 1, 1])
    cluster = np.repeat(np.arange(len(sizes)), sizes)
    residuals = np.random.default_rng(0).normal(size=len(cluster))
    residuals -= residuals.mean()
    adjusted = np.bincount(cluster, weights=residuals) ** 2 / (1 - sizes / sizes.sum())
    a, b = _working_model(sizes.astype(float), adjusted)
    dense = _bell_mccaffrey_dense(sizes, a, b)
    closed = bell_mccaffrey_df(cluster, residuals)
    assert abs(dense - closed) < 1e-9 * dense, (dense, closed)
    assert abs(_bell_mccaffrey_dense(np.full(4, 5), 1.0, 0.3) - 3) < 1e-9  # G - 1


def _working_model(sizes, adjusted) -> tuple[float, float]:
    """`intervals.effective_clusters`'s moment fit of a and b, for one group."""
    m1, m2, m3 = ((sizes**k).sum() for k in (1, 2, 3))
    s1, s2 = adjusted.sum(), (sizes * adjusted).sum()
    determinant = m1 * m3 - m2**2
    if not determinant > 1e-9 * m2**2:
        return 1.0, 0.0
    a = (s1 * m3 - s2 * m2) / determinant
    b = (m1 * s2 - m2 * s1) / determinant
    if b < 0:
        a, b = 1.0, 0.0
    a = max(a, 0.0)
    return (1.0, 0.0) if a == 0 and b == 0 else (a, b)


def covered(error, standard_error, df) -> tuple[float, float]:
    """The share of intervals made that covered the truth, and the share not made."""
    t = t_quantile(df)
    made = np.isfinite(t)
    return float(np.mean(np.abs(error[made]) <= t[made] * standard_error[made])), float(
        1 - made.mean()
    )


def main() -> None:
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    check_bell_mccaffrey()
    print(f"{studies} studies per setting, two figures each; one binomial standard error")
    print(f"is about {math.sqrt(0.95 * 0.05 / (2 * studies)) * 100:.1f} points\n")
    for label, base in (
        ("crowd of bench/coverage.py", Crowd()),
        ("annotators differ twice as much", Crowd(leniency_sd=0.8, taste_sd=0.6)),
    ):
        print(label)
        print(
            f"{'annotators':>10} {'workload sd':>11}  {'figure':<18}"
            + "".join(f"{r:>8}" for r in (*RULES, "apart"))
        )
        for annotators, sd in SETTINGS:
            crowd = replace(base, annotators=annotators, workload_sd=sd)
            found = errors(crowd, studies, seed=annotators * 10 + int(sd * 10))
            for name, rows in found.items():
                cells = []
                for column in range(2, 2 + len(RULES)):
                    share, none = covered(rows[:, 0], rows[:, 1], rows[:, column])
                    cells.append(f"{share * 100:7.1f}" + ("*" if none > 0.005 else " "))
                # The same figure of the study before (a study holds sources - 1 rows).
                other = np.roll(np.arange(len(rows)), crowd.sources - 1)
                share, none = covered(rows[:, 0], rows[other, 1], rows[other, 2])
                cells.append(f"{share * 100:7.1f}" + ("*" if none > 0.005 else " "))
                print(f"{annotators:>10} {sd:>11.1f}  {name:<18}" + "".join(cells), flush=True)
        print()
    print("* more than 0.5 % of figures got no interval (fewer than two effective clusters)")


if __name__ == "__main__":
    main()
