"""Whether the means' and paired differences' t quantile, replaced by the exact quantile
of the studentized mean under the working model the platform already fits, removes the
conservatism of the published intervals at skewed workloads (`bench/coverage_df.py`'s
"apart" column: a heavy annotator's leniency moves both the mean and its spread).

The working model is `intervals.effective_clusters`'s: the clusters of the governing term
(annotators or cells, whichever has the smaller effective number, as the published
degrees of freedom take) have independent sums S_g ~ N(0, a n_g + b n_g^2), a and b
fitted to the CR2 contributions by moments. Under it the studentized mean
(sum S / n) / sqrt(CR2 variance of the residual sums) has a distribution that depends on
the cluster sizes and a / b only; Student's t with Satterthwaite degrees of freedom
approximates it as if numerator and denominator were independent, which with unequal
clusters they are not. Here its 95 % quantile is drawn (4,000 draws, seeded) and used in
place of t; the variance is the published two-way one, unchanged.

Same studies as `bench/coverage_df.py` (same seeds); figures without a published interval
are left out of both columns.

    .venv/bin/python bench/coverage_exact.py [STUDIES] [--strong]
"""

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.clustered import generalized_half_width
from annotation.stats.crowd import Crowd, simulate
from annotation.stats.intervals import _cluster_term, t_quantile, two_way_cluster_means
from bench.coverage_df import SETTINGS, _working_model

DRAWS = 4000


def exact_quantile(cluster, residuals, rng, confidence: float = 0.95) -> float:
    """The `confidence` quantile of |studentized mean| under the fitted working model of
    the one-way clustering `cluster`, drawn."""
    _, inverse = np.unique(cluster, return_inverse=True)
    sizes = np.bincount(inverse).astype(float)
    if len(sizes) < 2:
        return float("nan")
    n = sizes.sum()
    adjusted = np.bincount(inverse, weights=residuals) ** 2 / (1 - sizes / n)
    a, b = _working_model(sizes, adjusted)
    sums = rng.normal(size=(DRAWS, len(sizes))) * np.sqrt(a * sizes + b * sizes**2)
    error = sums.sum(axis=1) / n
    residual_sums = sums - np.outer(error, sizes)
    variance = (residual_sums**2 / (1 - sizes / n)).sum(axis=1) / n**2
    return float(np.quantile(np.abs(error) / np.sqrt(variance), confidence))


def combined_half_width(values, cell, annotator) -> float:
    """The half-width alpha's interval takes (`clustered.generalized_half_width`): the
    fiducial interval of V_cells + V_annotators - V_intersection, each term on its own
    effective number of clusters minus one, instead of Student's t on the fewer."""
    group = np.zeros(len(values), dtype=np.int64)
    n = np.array([len(values)])
    residuals = values - values.mean()
    terms = []
    for cluster in (cell, annotator, cell * (int(annotator.max()) + 1) + annotator):
        term = _cluster_term(group, cluster, residuals, 1, n)
        terms.append((float(term.variance_sum[0]) / len(values) ** 2, float(term.effective[0])))
    return generalized_half_width(terms, 0.95)


def coverage(crowd: Crowd, studies: int, seed: int) -> dict[str, np.ndarray]:
    """Per figure: covered with t (published), covered with the exact quantile, and the
    two quantiles."""
    rng = np.random.default_rng(seed)
    draws = np.random.default_rng(seed + 1)
    levels = crowd.levels()
    rows: dict[str, list] = {"mean": [], "paired difference": []}
    for _ in range(studies):
        study = simulate(rng, crowd)
        for source in range(1, crowd.sources):
            mine = study["right"] == source
            annotator, cell = study["annotator"][mine], study["cell"][mine]
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
                t = float(t_quantile(found.df)[0])
                if not math.isfinite(t):
                    continue  # no interval published
                by_annotator = found.effective_annotators[0] <= found.effective_cells[0]
                q = exact_quantile(
                    annotator if by_annotator else cell, values - values.mean(), draws
                )
                error, spread = abs(found.mean[0] - truth), found.standard_error[0]
                half = combined_half_width(values, cell, annotator)
                rows[name].append((error <= t * spread, error <= q * spread, t, q, error <= half))
    return {name: np.array(found, dtype=float) for name, found in rows.items()}


def main() -> None:
    studies = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 2000
    strong = "--strong" in sys.argv
    crowd = Crowd(leniency_sd=0.8, taste_sd=0.6) if strong else Crowd()
    print(("annotators differ twice as much" if strong else "crowd of bench/coverage.py") + ",")
    print(f"{studies} studies per setting; coverage in %, ± one binomial standard error")
    print(
        f"{'annotators':>10} {'sd':>4}  {'figure':<18} {'t':>6} {'exact':>6} {'±':>4}  median t / exact quantile"
    )
    for annotators, sd in SETTINGS:
        setting = replace(crowd, annotators=annotators, workload_sd=sd)
        found = coverage(setting, studies, seed=annotators * 10 + int(sd * 10))
        for name, rows in found.items():
            error = math.sqrt(0.95 * 0.05 / len(rows)) * 100
            print(
                f"{annotators:>10} {sd:>4}  {name:<18} {rows[:, 0].mean() * 100:6.1f}"
                f" {rows[:, 1].mean() * 100:6.1f} {rows[:, 4].mean() * 100:8.1f} {error:4.1f}  "
                f"{np.median(rows[:, 2]):.2f} / {np.median(rows[:, 3]):.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
