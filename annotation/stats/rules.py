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


# Named in the results document so that a reader knows what each interval is.
METHODS = {
    "leaderboard": "two-way cluster-robust t interval (cells, annotators)",
    "paired_differences": "two-way cluster-robust t interval (cells, annotators)",
    "diversity": "two-way cluster-robust t interval (sets, annotators)",
    "agreement": "two-way cluster-robust t interval (cells, annotators), jackknife variances",
    "bradley_terry": "two-way cluster-robust sandwich t interval (cells, annotators)",
    "proportions": "Wilson interval on the design-effect-adjusted sample size",
}
