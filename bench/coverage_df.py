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
- count: the number of annotators (or cells), the fewer, minus one.

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
RULES = ("fitted", "Kish", "count")


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
                    )
                )
    return {name: np.array(found) for name, found in rows.items()}


def covered(error, standard_error, df) -> tuple[float, float]:
    """The share of intervals made that covered the truth, and the share not made."""
    t = t_quantile(df)
    made = np.isfinite(t)
    return float(np.mean(np.abs(error[made]) <= t[made] * standard_error[made])), float(
        1 - made.mean()
    )


def main() -> None:
    studies = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print(f"{studies} studies per setting, two figures each; one binomial standard error")
    print(f"is about {math.sqrt(0.95 * 0.05 / (2 * studies)) * 100:.1f} points\n")
    for label, base in (
        ("crowd of bench/coverage.py", Crowd()),
        ("annotators differ twice as much", Crowd(leniency_sd=0.8, taste_sd=0.6)),
    ):
        print(label)
        print(
            f"{'annotators':>10} {'workload sd':>11}  {'figure':<18}"
            + "".join(f"{r:>8}" for r in RULES)
        )
        for annotators, sd in SETTINGS:
            crowd = replace(base, annotators=annotators, workload_sd=sd)
            found = errors(crowd, studies, seed=annotators * 10 + int(sd * 10))
            for name, rows in found.items():
                cells = []
                for column in range(2, 5):
                    share, none = covered(rows[:, 0], rows[:, 1], rows[:, column])
                    cells.append(f"{share * 100:7.1f}" + ("*" if none > 0.005 else " "))
                print(f"{annotators:>10} {sd:>11.1f}  {name:<18}" + "".join(cells), flush=True)
        print()
    print("* more than 0.5 % of figures got no interval (fewer than two effective clusters)")


if __name__ == "__main__":
    main()
