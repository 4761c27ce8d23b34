"""The minimum-information rule: which estimates get an interval. Below `min_judgments`
judgments or `min_annotators` annotators an interval would mean nothing; and where the
interval cannot be computed at all, the estimate has not enough data either, so that
`enough_data` true always comes with both bounds."""

import numpy as np

from .rules import Rules


def enough_information(
    n, annotators, *, min_judgments: int, min_annotators: int
) -> np.ndarray | bool:
    """Whether an estimate rests on enough judgments and annotators for an interval."""
    return (np.asarray(n) >= min_judgments) & (np.asarray(annotators) >= min_annotators)


def enough_for_interval(enough, low, high) -> np.ndarray:
    """The minimum-information rule (`enough`), and an interval to show. Enough
    annotators can still leave too little: when one of them did most of a figure's work,
    fewer than two annotators' (or cells') worth of independent information remains, the
    t has under one degree of freedom and no interval exists. Such a figure has not
    enough data, however many took part: `enough_data` true always comes with bounds."""
    return np.asarray(enough) & np.isfinite(low) & np.isfinite(high)


def enough_data(n, annotators, low, high, rules: Rules) -> np.ndarray:
    """`enough_data` of a figure from `n` judgments by `annotators` with interval
    (`low`, `high`): the study's minimum information, and bounds to show."""
    enough = enough_information(
        n, annotators, min_judgments=rules.min_judgments, min_annotators=rules.min_annotators
    )
    return enough_for_interval(enough, low, high)
