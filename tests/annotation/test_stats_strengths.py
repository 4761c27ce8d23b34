"""Bradley-Terry strengths as the results publish them: under the minimum-information
rule, separated sources without a number, and none where they would only restate the
win rates."""

import numpy as np

from annotation.stats.preferences import preferences
from annotation.stats.rules import Rules
from annotation.stats.study import SourceInfo

SOURCES = {1: SourceInfo("human", "human"), 2: SourceInfo("a", "llm"), 3: SourceInfo("b", "llm")}
RULES = Rules(draws=200, seed=1, min_judgments=10, min_annotators=5)


def row(cell, left, right, preferred, annotator, tie=False):
    """A pair judgment as `preferences` reads it."""
    return (1, cell, preferred, tie, None, False, left, right, annotator)


def round_robin(rng, cells, annotators):
    rows = []
    for cell in range(cells):
        for left, right in ((1, 2), (1, 3), (2, 3)):
            for _ in range(3):
                winner = left if rng.random() < 0.5 else right
                rows.append(row(cell, left, right, winner, f"p{rng.integers(annotators)}"))
    return rows


def test_eight_comparisons_by_two_annotators_get_no_interval():
    """Wide open bounds (-7.61 to 7.86) were published from this little."""
    rows = [
        row(0, 1, 2, 1, "p1"),
        row(0, 1, 3, 3, "p1"),
        row(0, 2, 3, 2, "p2"),
        row(1, 1, 2, 2, "p2"),
        row(1, 1, 3, 1, "p1"),
        row(1, 2, 3, 3, "p2"),
        row(2, 1, 2, 1, "p1"),
        row(2, 2, 3, 2, "p2"),
    ]

    strengths = preferences(rows, 1, SOURCES, RULES)["bradley_terry"]

    for figures in strengths.values():
        assert figures["log_strength"] is not None
        assert figures["ci_low"] is None and figures["ci_high"] is None
        assert figures["enough_data"] is False
        assert figures["annotators"] == 2
    assert sum(f["n"] for f in strengths.values()) == 2 * len(rows)


def test_enough_comparisons_and_annotators_get_an_interval():
    rows = round_robin(np.random.default_rng(1), cells=30, annotators=12)

    out = preferences(rows, 1, SOURCES, RULES)

    assert out["bradley_terry_note"] == ""
    for figures in out["bradley_terry"].values():
        assert figures["enough_data"] is True
        assert figures["ci_low"] < figures["log_strength"] < figures["ci_high"]


def test_a_separated_source_is_reported_without_a_number():
    rows = round_robin(np.random.default_rng(2), cells=30, annotators=12)
    # Source b loses every comparison it is in.
    rows = [
        (*r[:2], (r[6] if r[7] == 3 else r[7]) if 3 in (r[6], r[7]) else r[2], *r[3:]) for r in rows
    ]

    strengths = preferences(rows, 1, SOURCES, RULES)["bradley_terry"]

    assert strengths["b"]["status"] == "separated"
    assert strengths["b"]["log_strength"] is None and strengths["b"]["ci_low"] is None
    assert strengths["a"]["log_strength"] is not None


def test_no_strengths_where_every_comparison_is_with_the_reference():
    """Each source's only games are against the reference: its strength is its win rate
    on the log-odds scale again."""
    rng = np.random.default_rng(3)
    rows = [
        row(cell, 1, compared, 1 if rng.random() < 0.5 else compared, f"p{rng.integers(9)}")
        for cell in range(40)
        for compared in (2, 3)
    ]

    out = preferences(rows, 1, SOURCES, RULES)

    assert out["bradley_terry"] == {}
    assert out["bradley_terry_note"] == "restates_win_rates"
    assert set(out["preferences"]) == {"a", "b"}


def test_no_pair_judgments_at_all():
    assert preferences([], 1, SOURCES, RULES)["bradley_terry_note"] == "no_comparisons"
