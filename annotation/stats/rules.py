"""How the study's intervals are made, as the results document states it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    """How intervals are made: bootstrap draws and seed, and the minimum information
    below which an estimate gets no interval."""

    draws: int
    seed: int
    min_judgments: int
    min_annotators: int
    confidence: float = 0.95

    def describe(self) -> dict:
        return {
            "bootstrap_draws": self.draws,
            "seed": self.seed,
            "confidence": self.confidence,
            "min_judgments": self.min_judgments,
            "min_annotators": self.min_annotators,
            "methods": METHODS,
        }


# The version of the methods text (`annotation.methods`) and of what it describes.
# Changes whenever the wording or the statistics it states change, so that a pasted
# paragraph can be traced to it (2: the bootstraps' limitation is stated; 3: alpha and
# Bradley-Terry intervals are two-way clustered, the draws only screen for near
# separation; 4: CR2 variances and t on the effective number of clusters, Korn-Graubard
# t for proportions and the effective number of clusters at 0 and 1, an ICC interval,
# Bradley-Terry under the minimum-information rule and left out where it restates win
# rates, the multiplicity note; 5: alpha's jackknife terms weighted as CR2 and its interval
# the generalized (fiducial) interval of the two-way combination, each term on its
# effective number of clusters minus one degrees of freedom; 6: no interval, and not
# enough data, where the effective number of annotators or cells is below two; paired
# differences adjusted for length and emoji/kaomoji; 7: agreement per round and per
# character stated as point figures without intervals; the fiducial quadrature's step
# doubled, the same intervals within 2e-6; 8: ICC's interval built as alpha's, from
# left-out estimates stepped to the study's ratings per unit).
# tests/annotation/test_methods_version.py ties it to the code.
METHODS_VERSION = "chatanime-methods/8"

# Named in the results document so that a reader knows what each interval is.
_MEANS = (
    "two-way cluster-robust t interval ({}, annotators): CR2 one-way variances, t on the "
    "effective number of {} or annotators (the fewer) minus one"
)
METHODS = {
    "version": METHODS_VERSION,
    "leaderboard": _MEANS.format("cells", "cells"),
    "paired_differences": _MEANS.format("cells", "cells"),
    "diversity": _MEANS.format("sets", "sets"),
    "style_adjusted_differences": (
        "least-squares intercept of the paired differences on the length (per 100 "
        "characters) and emoji/kaomoji differences; two-way cluster-robust (cells, "
        "annotators) on the intercept's influence, CR2 one-way terms, t on the "
        "effective number of cells or annotators minus one"
    ),
    "agreement": (
        "alpha: two-way cluster-robust interval (cells, annotators), jackknife variances "
        "weighted as CR2, generalized (fiducial) interval with each term on its effective "
        "number of clusters minus one; ICC(1,k): the same, each left-out estimate the "
        "single-rating ICC(1) stepped to the study's ratings per unit (Spearman-Brown)"
    ),
    "bradley_terry": (
        "two-way cluster-robust sandwich t interval (cells, annotators) under the "
        "minimum-information rule; none where every comparison is with the reference"
    ),
    "proportions": (
        "Wilson interval on the design-effect-adjusted sample size with Student's t "
        "(Korn-Graubard); at 0 or 1 the effective number of clusters as sample size"
    ),
    "multiplicity": "none: each interval covers its own figure; Bonferroni over 9 metrics",
}
