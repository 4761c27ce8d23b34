"""The look-ahead weighs candidates a few at a time and stops once it has a few that strand
nothing; the item it puts first is the one weighing them all would put first."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.selectors import ordering


def weigh_with(costs: dict[int, int], monkeypatch):
    asked: list[list[int]] = []

    def stranding_costs_of(user, study, candidate_ids, now, until=None):
        asked.append(list(candidate_ids))
        return {item: costs[item] for item in candidate_ids if costs[item]}

    monkeypatch.setattr(ordering, "stranding_costs_of", stranding_costs_of)
    free, unweighed, stranding, _matched = ordering._weighed(None, None, list(costs), None)
    return free + unweighed + stranding, asked


@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=100))
def test_the_first_choice_is_the_one_weighing_every_candidate_gives(raw_costs):
    costs = dict(enumerate(raw_costs))
    with pytest.MonkeyPatch.context() as monkeypatch:
        order, _asked = weigh_with(costs, monkeypatch)

    everything_weighed = sorted(costs, key=costs.get)
    assert order[0] == everything_weighed[0]
    assert sorted(order) == sorted(costs)  # nothing lost, nothing twice


def test_early_in_a_study_only_the_first_few_are_weighed(monkeypatch):
    costs = dict.fromkeys(range(100), 0)
    costs[0] = 2  # the greedy first choice would strand two judgments

    order, asked = weigh_with(costs, monkeypatch)

    assert asked == [list(range(ordering.LOOKAHEAD_CHUNK))]
    assert order[0] == 1 and order[-1] == 0


def test_late_in_a_study_every_candidate_is_weighed(monkeypatch):
    costs = dict.fromkeys(range(100), 1)
    costs[97] = 0

    order, asked = weigh_with(costs, monkeypatch)

    assert [item for chunk in asked for item in chunk] == list(range(100))
    assert order[0] == 97
