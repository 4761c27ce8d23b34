"""The look-ahead weighs candidates a few at a time and stops once it has a few that strand
nothing; the item it puts first is the one weighing them all would put first. Its order
is kept for a plan only where every candidate it weighed has slack that lasts the plan
out."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.selectors import lookahead, ordering


def weigh_with(costs: dict[int, int], monkeypatch, lasting=frozenset()):
    """`_weighed` over `costs`, with `lasting` the candidates whose scenario keeps its slack
    until the plan ends: the order, the chunks asked, and whether the order holds."""
    asked: list[list[int]] = []

    def stranding_costs_of(user, study, candidate_ids, now, until=None):
        asked.append(list(candidate_ids))
        found = lookahead.StrandingCosts(
            {item: costs[item] for item in candidate_ids if costs[item]}
        )
        found.lasting = frozenset(lasting).intersection(candidate_ids)
        return found

    monkeypatch.setattr(ordering, "stranding_costs_of", stranding_costs_of)
    free, unweighed, stranding, holds = ordering._weighed(None, None, list(costs), None)
    return free + unweighed + stranding, asked, holds


@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=100))
def test_the_first_choice_is_the_one_weighing_every_candidate_gives(raw_costs):
    costs = dict(enumerate(raw_costs))
    with pytest.MonkeyPatch.context() as monkeypatch:
        order, _asked, _holds = weigh_with(costs, monkeypatch)

    everything_weighed = sorted(costs, key=costs.get)
    assert order[0] == everything_weighed[0]
    assert sorted(order) == sorted(costs)  # nothing lost, nothing twice


def test_early_in_a_study_only_the_first_few_are_weighed(monkeypatch):
    costs = dict.fromkeys(range(100), 0)
    costs[0] = 2  # the greedy first choice would strand two judgments

    order, asked, _holds = weigh_with(costs, monkeypatch)

    assert asked == [list(range(ordering.LOOKAHEAD_CHUNK))]
    assert order[0] == 1 and order[-1] == 0


def test_late_in_a_study_every_candidate_is_weighed(monkeypatch):
    costs = dict.fromkeys(range(100), 1)
    costs[97] = 0

    order, asked, _holds = weigh_with(costs, monkeypatch)

    assert [item for chunk in asked for item in chunk] == list(range(100))
    assert order[0] == 97


def test_the_order_holds_where_every_candidate_weighed_keeps_its_slack(monkeypatch):
    costs = dict.fromkeys(range(100), 0)

    _order, asked, holds = weigh_with(costs, monkeypatch, lasting=range(100))

    assert holds and asked == [list(range(ordering.LOOKAHEAD_CHUNK))]


def test_one_candidate_weighed_without_lasting_slack_keeps_the_order_for_one_request(
    monkeypatch,
):
    costs = dict.fromkeys(range(100), 0)
    lasting = set(range(100)) - {4}

    _order, _asked, holds = weigh_with(costs, monkeypatch, lasting=lasting)

    assert not holds


def test_candidates_never_weighed_do_not_shorten_the_order(monkeypatch):
    costs = dict.fromkeys(range(100), 0)
    weighed_first = set(range(ordering.LOOKAHEAD_CHUNK))

    _order, asked, holds = weigh_with(costs, monkeypatch, lasting=weighed_first)

    assert asked == [sorted(weighed_first)] and holds


def test_late_in_a_study_the_order_holds_only_if_every_chunk_keeps_its_slack(monkeypatch):
    costs = dict.fromkeys(range(30), 1)
    costs[25] = 0
    every_chunk_but_the_last = set(range(20))

    _order, asked, holds = weigh_with(costs, monkeypatch, lasting=every_chunk_but_the_last)

    assert len(asked) == 3 and not holds
