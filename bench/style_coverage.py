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
    .venv/bin/python bench/style_coverage.py --timing

--timing: instead, the median of 5 in-process computations of every style-adjusted
difference of a large study (72,000 judgments of 10 compared sources against the
reference, 9 metrics, 600 cells, 180 annotators: 648,000 paired ratings), synthetic.
"""

import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.coverage import covers
from annotation.stats.crowd import style_pairs
from annotation.stats.intervals import two_way_cluster_means
from annotation.stats.style import style_fit

SETTINGS = [(10, 0.0), (10, 1.0), (40, 0.0), (40, 1.5)]
DIFFERENCE, PER_100 = 0.4, 0.5


def one_study(rng, annotators: int, workload_sd: float) -> tuple[float, float]:
    """(the adjusted interval covered 0.4, the plain paired difference's interval
    covered its own truth, 0.4 + 0.5 x 0.8): 1, 0, or NaN without an interval."""
    value, length, cell, annotator = style_pairs(
        rng, annotators=annotators, difference=DIFFERENCE, per_100=PER_100, workload_sd=workload_sd
    )
    fit = style_fit(value, length, np.zeros(len(cell)), cell, annotator)
    adjusted = covers(fit.ci_low, DIFFERENCE, fit.ci_high) if fit else float("nan")
    plain = two_way_cluster_means(value, np.zeros(len(cell), int), cell, annotator, 1)
    return adjusted, covers(plain.ci_low[0], DIFFERENCE + PER_100 * 0.8, plain.ci_high[0])


def timing() -> None:
    from annotation.stats.figures import with_reference
    from annotation.stats.rules import Rules
    from annotation.stats.study import MetricInfo, SourceInfo
    from annotation.stats.style import style_adjusted_differences

    rng = np.random.default_rng(0)
    judgments, metrics = 72_000, 9
    judgment = np.arange(judgments)
    compared = rng.integers(2, 12, judgments)
    columns = {
        "judgment": judgment,
        "annotator": rng.integers(0, 180, judgments),
        "item": judgment,
        "character": rng.integers(1, 21, judgments),
        "scenario": rng.integers(1, 31, judgments),
        "round": np.ones(judgments, dtype=np.int64),
        "is_pair": np.ones(judgments, dtype=np.int64),
    }
    parts = []
    for metric in range(1, metrics + 1):
        for source, answer in (
            (np.ones(judgments), 2 * judgment + 1),
            (compared, 2 * judgment + 2),
        ):
            parts.append(
                {
                    **columns,
                    "value": rng.integers(1, 6, judgments),
                    "metric": np.full(judgments, metric),
                    "source": source,
                    "answer": answer,
                }
            )
    data = {k: np.concatenate([p[k] for p in parts]).astype(np.int64) for k in parts[0]}
    styles = {
        a: (int(rng.integers(20, 300)), int(rng.integers(0, 3)))
        for a in range(1, 2 * judgments + 1)
    }
    metric_by_id = {m: MetricInfo(m, f"metric-{m}", "language") for m in range(1, metrics + 1)}
    sources = {s: SourceInfo(f"source-{s}", "llm") for s in range(1, 12)}
    rules = Rules(draws=0, seed=0, min_judgments=10, min_annotators=5)
    seconds = []
    for _ in range(5):
        started = time.perf_counter()
        paired = with_reference(1, data)
        style_adjusted_differences(paired, metric_by_id, sources, styles, rules)
        seconds.append(time.perf_counter() - started)
    print(f"style-adjusted differences of {len(data['value']) // 2:,} paired ratings:")
    print(
        f"median {statistics.median(seconds):.2f} s of 5 (min {min(seconds):.2f}, max {max(seconds):.2f})"
    )


def main() -> None:
    if "--timing" in sys.argv:
        timing()
        return
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
