"""Coverage of the style-adjusted paired difference's 95 % interval
(`annotation.stats.style.style_fit`) over simulated studies, at 10 and 40 annotators with
even or lognormal workloads (sd 1 at 10, sd 1.5 at 40), as `bench/coverage.py` does for
the other figures.

Each study: 40 character x scenario cells of 4 pairs; the compared answer is longer by
0.8 +- 0.6 hundred characters; the paired difference is 0.4 + 0.5 per 100 characters plus
a cell effect (sd 0.3), an annotator's taste for the compared source (sd 0.3) and noise
(sd 0.8); each pair judged by one annotator. Prints, per setting, the share of intervals
that covered 0.4 with its Monte Carlo standard error, and beside it the plain paired
difference's interval (`two_way_cluster_means`, the results' own) on the same studies:
the adjusted figure's interval is the means' one applied to the intercept (identical
without a style term), so the two should cover alike.

    .venv/bin/python bench/style_coverage.py [STUDIES]
"""

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.intervals import two_way_cluster_means
from annotation.stats.style import style_fit

SETTINGS = [(10, 0.0), (10, 1.0), (40, 0.0), (40, 1.5)]
DIFFERENCE, PER_100, CELLS, PER_CELL = 0.4, 0.5, 40, 4


def one_study(rng, annotators: int, workload_sd: float) -> tuple[float, float]:
    """(the adjusted interval covered 0.4, the plain paired difference's interval
    covered its own truth, 0.4 + 0.5 x 0.8)."""
    cell = np.repeat(np.arange(CELLS), PER_CELL)
    weight = rng.lognormal(0, workload_sd, annotators) if workload_sd else np.ones(annotators)
    annotator = rng.choice(annotators, len(cell), p=weight / weight.sum())
    length = rng.normal(0.8, 0.6, len(cell))
    value = (
        DIFFERENCE
        + PER_100 * length
        + rng.normal(0, 0.3, CELLS)[cell]
        + rng.normal(0, 0.3, annotators)[annotator]
        + rng.normal(0, 0.8, len(cell))
    )
    fit = style_fit(value, length, np.zeros(len(cell)), cell, annotator)
    adjusted = _hit(fit.ci_low, DIFFERENCE, fit.ci_high) if fit else float("nan")
    plain = two_way_cluster_means(value, np.zeros(len(cell), int), cell, annotator, 1)
    return adjusted, _hit(plain.ci_low[0], DIFFERENCE + PER_100 * 0.8, plain.ci_high[0])


def _hit(low, truth, high) -> float:
    """1 or 0; NaN where no interval was made (published as not enough data)."""
    return float(low <= truth <= high) if np.isfinite(low) and np.isfinite(high) else np.nan


def main() -> None:
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = np.random.default_rng(20261128)
    print(f"{studies} studies per setting")
    print("annotators  workload sd  adjusted (s.e., no interval)  plain paired difference")
    for annotators, workload_sd in SETTINGS:
        runs = np.array([one_study(rng, annotators, workload_sd) for _ in range(studies)])
        cells = []
        for column in runs.T:
            made = column[np.isfinite(column)]
            share = made.mean()
            error = math.sqrt(share * (1 - share) / len(made))
            cells.append(f"{share:6.1%} ({error:.1%}, {1 - len(made) / studies:.0%})")
        print(f"{annotators:>10}  {workload_sd:>11.1f}  {cells[0]:>28}  {cells[1]:>22}")


if __name__ == "__main__":
    main()
