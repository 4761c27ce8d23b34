"""The pure assignment rules, checked by property-based tests."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.assignment import (
    REFERENCE,
    ROUND_ROBIN,
    annotators_needed,
    left_first,
    source_pairs,
)


def test_the_reference_design_pairs_each_compared_source_with_the_reference():
    assert source_pairs(REFERENCE, 1, [2, 3, 4]) == [(1, 2), (1, 3), (1, 4)]


def test_the_round_robin_design_pairs_every_two_sources_once():
    pairs = source_pairs(ROUND_ROBIN, 1, [2, 3, 4])

    assert sorted(pairs) == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]


@given(st.integers(min_value=1, max_value=15))
def test_round_robin_is_balanced(n_compared):
    pairs = source_pairs(ROUND_ROBIN, 0, list(range(1, n_compared + 1)))
    appearances = [sum(source in pair for pair in pairs) for source in range(n_compared + 1)]

    assert len(set(appearances)) == 1
    assert len(pairs) == len(set(pairs)) == (n_compared + 1) * n_compared // 2


def test_annotators_needed_for_the_published_design():
    # 10 LLMs against the human source, both rounds, 3 judgments per pair: every item of
    # a (character, scenario) shows the human round-1 answer, so each annotator can take
    # one of its 20 items.
    assert annotators_needed(design=REFERENCE, n_compared=10, n_rounds=2, overlap=3) == 60
    assert annotators_needed(design=REFERENCE, n_compared=3, n_rounds=1, overlap=2) == 6
    # Round-robin over 11 sources: 55 pairs x 2 rounds x 3 = 330 judgments per scenario,
    # 5 disjoint pairs per annotator.
    assert annotators_needed(design=ROUND_ROBIN, n_compared=10, n_rounds=2, overlap=3) == 66


def test_diversity_sets_raise_the_need_where_they_close_scenarios():
    reference = {"design": REFERENCE, "n_compared": 3, "n_rounds": 2, "overlap": 3}
    # 3 sources x 2 rounds x 3 judgments = 18 per scenario, one item per annotator.
    assert annotators_needed(**reference) == 18
    # The 3 raters of the human set can take no pair of its scenarios.
    assert annotators_needed(**reference, sets_by_scenario=[(0, 2), (1, 3)], n_sets=4) == 21
    # A compared source's set leaves the pairs with the other compared sources open.
    assert annotators_needed(**reference, sets_by_scenario=[(0, 3), (0, 1)], n_sets=3) == 18
    # With one compared source there is no other pair to take.
    assert (
        annotators_needed(
            design=REFERENCE, n_compared=1, n_rounds=1, overlap=2, sets_by_scenario=[(0, 1)]
        )
        == 4
    )
    # One set per annotator and character: 12 sets x 3 raters.
    assert annotators_needed(**reference, sets_by_scenario=[(1, 3)], n_sets=12) == 36
    # Round robin over 4 sources: 2 disjoint pairs per scenario, 1 once a source is seen;
    # 36 judgments per scenario need 18, plus 3 raters x 4 sets lose 1 each.
    round_robin = {"design": ROUND_ROBIN, "n_compared": 3, "n_rounds": 2, "overlap": 3}
    assert annotators_needed(**round_robin) == 18
    assert annotators_needed(**round_robin, sets_by_scenario=[(1, 3)]) == 24
    # Over 3 sources a seen source costs nothing: one pair per scenario either way.
    assert (
        annotators_needed(
            design=ROUND_ROBIN, n_compared=2, n_rounds=1, overlap=3, sets_by_scenario=[(1, 2)]
        )
        == 9
    )


@settings(max_examples=300)
@given(
    n_sources=st.integers(min_value=2, max_value=12),
    reference_design=st.booleans(),
    steps=st.lists(
        st.tuples(st.integers(0, 1000), st.integers(0, 1000), st.floats(0, 0.999)), max_size=300
    ),
)
def test_counterbalancing_keeps_every_source_near_even(n_sources, reference_design, steps):
    """Whatever pairs come, however the ties fall, no source drifts far to one side."""
    imbalance = {}
    for first, second, coin in steps:
        if reference_design:
            pair = (0, 1 + first % (n_sources - 1))
        else:
            a, b = first % n_sources, second % n_sources
            if a == b:
                continue
            pair = (a, b)
        order = left_first(pair, imbalance, coin)
        left, right = pair[order[0]], pair[order[1]]
        imbalance[left] = imbalance.get(left, 0) + 1
        imbalance[right] = imbalance.get(right, 0) - 1
        assert sorted(order) == [0, 1]
    bound = max(1, math.ceil(math.log2(n_sources)))
    assert all(abs(value) <= bound for value in imbalance.values())
    assert sum(imbalance.values()) == 0


@given(st.integers(-5, 5), st.integers(-5, 5), st.floats(0, 0.999))
def test_the_source_shown_left_less_often_goes_left(a, b, coin):
    order = left_first([10, 20], {10: a, 20: b}, coin)

    if a < b:
        assert order == [0, 1]
    elif b < a:
        assert order == [1, 0]
