"""Simulated crowds with known truths, as arrays: what the coverage checks of the
intervals (tests and `bench/coverage.py`) draw studies from. Pure numpy.

Real crowds are skewed: a few annotators do most of the work. Each annotator gets a
workload weight drawn lognormal with sd `workload_sd` (0 gives everyone the same), and
each item's `overlap` annotators are drawn without replacement with probability in
proportion to the weights (Gumbel top-k), so an annotator can do at most one judgment
per item, as on the platform.

A rating is the sum of the source's true level, a cell effect (shared by every answer
of the cell), an answer effect (shared by every rating of that answer), the annotator's
leniency, the annotator's taste for the source, and noise. The preference is the sign
of the two ratings' difference before rounding, so that win rates have a closed-form
truth. Bradley-Terry studies compare random pairs of sources (`all_pairs`)."""

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Crowd:
    annotators: int = 10
    workload_sd: float = 0.0
    cells: int = 60
    sources: int = 3  # the reference (source 0) and the compared ones
    overlap: int = 3
    cell_sd: float = 0.4
    answer_sd: float = 0.5
    leniency_sd: float = 0.4
    taste_sd: float = 0.3
    noise_sd: float = 0.7
    # Compared minus reference, per source (source 0 is the reference: 0).
    level_step: float = 0.25
    all_pairs: bool = False

    def levels(self) -> np.ndarray:
        return 3.0 + self.level_step * np.arange(self.sources)

    def true_win_rate(self, source: int) -> float:
        """P(compared answer rated above the reference's), before rounding."""
        spread = math.sqrt(2 * (self.answer_sd**2 + self.taste_sd**2 + self.noise_sd**2))
        gap = self.levels()[source] - self.levels()[0]
        return 0.5 * (1 + math.erf(gap / spread / math.sqrt(2)))


def workload_weights(rng, annotators: int, sd: float) -> np.ndarray:
    return np.exp(rng.normal(0, sd, annotators)) if sd > 0 else np.ones(annotators)


def effective_annotators(annotator, annotators: int) -> float:
    """Kish's effective number of annotators of a study's judgments."""
    return effective_number(np.bincount(annotator, minlength=annotators))


def effective_number(workloads) -> float:
    """Kish's effective number from the judgments per annotator: as many annotators as
    would give the same precision with even workloads (0 without judgments)."""
    work = np.asarray(workloads, dtype=float)
    return float(work.sum() ** 2 / (work**2).sum()) if work.sum() else 0.0


def draw_annotators(rng, weights, items: int, overlap: int) -> np.ndarray:
    """items x overlap distinct annotators per item, drawn in proportion to `weights`
    without replacement."""
    if np.all(weights == weights[0]) and len(weights) > 8 * overlap:
        # Even workloads among many annotators: draw, and redraw the items that got
        # someone twice (cheaper than a key per annotator and item).
        chosen = rng.integers(0, len(weights), (items, overlap))
        while True:
            ordered = np.sort(chosen, axis=1)
            twice = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
            if not twice.any():
                return chosen
            chosen[twice] = rng.integers(0, len(weights), (int(twice.sum()), overlap))
    keys = np.log(weights)[None, :] + rng.gumbel(size=(items, len(weights)))
    return np.argpartition(-keys, overlap - 1, axis=1)[:, :overlap]


def simulate(rng, crowd: Crowd) -> dict:
    """One study: per judgment, its item's cell and pair of sources (left is the
    reference unless `all_pairs`), its annotator, the two answers' ratings (continuous
    and on the 1-5 scale), and which side was preferred (1 left, 0 right)."""
    levels = crowd.levels()
    if crowd.all_pairs:
        per_cell = crowd.sources * (crowd.sources - 1) // 2
        left, right = np.triu_indices(crowd.sources, 1)
    else:
        per_cell = crowd.sources - 1
        left, right = np.zeros(per_cell, dtype=np.int64), np.arange(1, crowd.sources)
    items = crowd.cells * per_cell
    item_cell = np.repeat(np.arange(crowd.cells), per_cell)
    item_left, item_right = np.tile(left, crowd.cells), np.tile(right, crowd.cells)
    weights = workload_weights(rng, crowd.annotators, crowd.workload_sd)
    annotator = draw_annotators(rng, weights, items, crowd.overlap).ravel()
    item = np.repeat(np.arange(items), crowd.overlap)
    cell = item_cell[item]
    cell_effect = rng.normal(0, crowd.cell_sd, crowd.cells)
    answer_effect = rng.normal(0, crowd.answer_sd, (crowd.cells, crowd.sources))
    leniency = rng.normal(0, crowd.leniency_sd, crowd.annotators)
    taste = rng.normal(0, crowd.taste_sd, (crowd.annotators, crowd.sources))

    def rating(source):
        return (
            levels[source]
            + cell_effect[cell]
            + answer_effect[cell, source]
            + leniency[annotator]
            + taste[annotator, source]
            + rng.normal(0, crowd.noise_sd, len(item))
        )

    source_left, source_right = item_left[item], item_right[item]
    value_left, value_right = rating(source_left), rating(source_right)
    return {
        "item": item,
        "cell": cell,
        "annotator": annotator,
        "left": source_left,
        "right": source_right,
        "value_left": value_left,
        "value_right": value_right,
        "likert_left": np.clip(np.round(value_left), 1, 5).astype(np.int64),
        "likert_right": np.clip(np.round(value_right), 1, 5).astype(np.int64),
        "left_won": (value_left > value_right).astype(np.int64),
    }


def style_pairs(
    rng,
    *,
    annotators: int,
    difference: float,
    per_100: float,
    workload_sd: float = 0.0,
    cells: int = 40,
    per_cell: int = 4,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Paired differences (compared - reference) with a known style effect, each pair
    judged by one annotator drawn in proportion to the workload weights: `difference` at
    equal length plus `per_100` per hundred characters the compared answer is longer
    (0.8 +- 0.6 hundred), a cell effect (sd 0.3), the annotator's taste for the compared
    source (sd 0.3) and noise (sd 0.8). Returns (difference, length difference per 100
    characters, cell, annotator): what `stats.style.style_fit` is checked on."""
    cell = np.repeat(np.arange(cells), per_cell)
    weights = workload_weights(rng, annotators, workload_sd)
    annotator = rng.choice(annotators, len(cell), p=weights / weights.sum())
    length = rng.normal(0.8, 0.6, len(cell))
    value = (
        difference
        + per_100 * length
        + rng.normal(0, 0.3, cells)[cell]
        + rng.normal(0, 0.3, annotators)[annotator]
        + rng.normal(0, 0.8, len(cell))
    )
    return value, length, cell, annotator
