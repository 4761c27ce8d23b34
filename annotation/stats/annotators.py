"""Per-annotator figures: how far each annotator sits from the others, and the figures
the results and the staff pages show for an annotator, from plain numbers."""

import numpy as np

from .arrays import clean, seconds_value


def agreement_deviations(units, annotators, values) -> dict[int, tuple[float, int]]:
    """Pure: each annotator's mean absolute distance from the mean of the *other*
    annotators on the same unit, over units rated by at least two people.

    Parallel arrays: `units` (any integer key of one answer x metric within one item),
    `annotators`, `values`. Returns {annotator: (mean distance, units compared)}.
    """
    units, annotators = np.asarray(units), np.asarray(annotators)
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return {}
    _u, unit_index = np.unique(units, return_inverse=True)
    unit_index = unit_index.ravel()
    totals = np.bincount(unit_index, weights=values)
    counts = np.bincount(unit_index)
    shared = counts[unit_index] >= 2
    others = (totals[unit_index][shared] - values[shared]) / (counts[unit_index][shared] - 1)
    distance = np.abs(values[shared] - others)
    ids, annotator_index = np.unique(annotators[shared], return_inverse=True)
    annotator_index = annotator_index.ravel()
    sums = np.bincount(annotator_index, weights=distance)
    n = np.bincount(annotator_index)
    return {int(a): (float(sums[i] / n[i]), int(n[i])) for i, a in enumerate(ids.tolist())}


def deviations_of(data) -> dict[int, tuple[float, int]]:
    """`agreement_deviations` over a study's loaded ratings (`annotation.results.loading`); the
    unit is one answer on one metric within one item."""
    return agreement_deviations(
        data["item"] * 1_000_000_000 + data["answer"] * 1000 + data["metric"],
        data["annotator"],
        data["value"],
    )


def median_seconds(seconds) -> float | None:
    """Median time on task of the times rounded to the millisecond, as the export has
    them, so that it can be rebuilt; None without judgments. Rounding keeps the order, so
    only the middle one or two times need rounding."""
    if not len(seconds):
        return None
    ordered = sorted(seconds)
    middle = ordered[(len(ordered) - 1) // 2 : len(ordered) // 2 + 1]
    return clean(float(np.median([seconds_value(s) for s in middle])))
