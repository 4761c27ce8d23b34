"""Coverage of the results' 95 % intervals over simulated studies, with even and skewed
annotator workloads (`annotation.stats.crowd`): means, paired differences, win rates,
Krippendorff's alpha and Bradley-Terry strengths, at 10 and 40 annotators, workloads
even (sd 0) or lognormal (sd 1 at 10 annotators, sd 1.5 at 40).

Each study: 60 character x scenario cells; a reference source and two compared ones;
each pair judged by 3 annotators drawn in proportion to their workload weights; cell,
answer, leniency, taste and noise effects (`Crowd`'s defaults). Bradley-Terry studies
compare all three pairs of sources in every cell. Prints, per setting and estimator,
the share of intervals that covered the truth with its Monte Carlo standard error
(binomial, over the intervals; intervals of one study are counted as independent), the
share of figures that got no interval ("none": too little information, published as not
enough data) where there are any, and the effective number of annotators (Kish) of the
judgments.

    .venv/bin/python bench/coverage.py [STUDIES] [--strong] [--overlap K]

--strong: annotators differ twice as much (leniency sd 0.8, taste sd 0.6).
--overlap K: each item judged by K annotators (default 3); with 1, one annotator can do
half of a source's work.
"""

import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.coverage import ESTIMATORS, coverage
from annotation.stats.crowd import Crowd, effective_annotators, simulate

SETTINGS = [(10, 0.0), (10, 1.0), (40, 0.0), (40, 1.5)]


def main() -> None:
    arguments = [
        a
        for i, a in enumerate(sys.argv[1:])
        if not a.startswith("--") and sys.argv[i] != "--overlap"
    ]
    studies = int(arguments[0]) if arguments else 2000
    base = Crowd(leniency_sd=0.8, taste_sd=0.6) if "--strong" in sys.argv else Crowd()
    if "--overlap" in sys.argv:
        base = replace(base, overlap=int(sys.argv[sys.argv.index("--overlap") + 1]))
    print(f"{studies} studies per setting; {base}")
    print(
        f"{'annotators':>10} {'workload sd':>11} {'effective':>9}  "
        + "  ".join(f"{name:>17}" for name in ESTIMATORS)
    )
    for annotators, sd in SETTINGS:
        crowd = replace(base, annotators=annotators, workload_sd=sd)
        rng = np.random.default_rng(99)
        effective = np.mean(
            [
                effective_annotators(simulate(rng, crowd)["annotator"], annotators)
                for _ in range(200)
            ]
        )
        started = time.perf_counter()
        shares = coverage(crowd, studies, seed=annotators * 10 + int(sd * 10))
        cells = []
        for name in ESTIMATORS:
            share, intervals, without = shares[name]
            error = math.sqrt(share * (1 - share) / intervals) if intervals else float("nan")
            cell = f"{share * 100:6.1f} ± {error * 100:3.1f} %"
            if without:
                cell += f" ({without / (intervals + without):.0%} none)"
            cells.append(cell.rjust(17))
        print(
            f"{annotators:>10} {sd:>11.1f} {effective:>9.1f}  "
            + "  ".join(cells)
            + f"   ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
