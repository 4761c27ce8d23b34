"""A scenario's slack: where the other annotators who may still take any of its items are
at least as many as the judgments left, the look-ahead needs no matching (any choice
strands nothing); where that slack lasts the plan out, a plan ordered by it is kept."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation import services
from annotation.pairing import ItemGroup, Taker, slack, stranding_costs
from annotation.selectors import lookahead, ordering, study_capacity
from annotation.services import worklists
from tests.builders import approved_annotator, make_study
from tests.helpers import spy_on, submit_item


@st.composite
def groups(draw):
    """One scenario's items with their open judgments and answers, and the others who
    may take them: some fresh (nothing seen, capacity left), some not."""
    n_items = draw(st.integers(min_value=1, max_value=5))
    items = list(range(n_items))
    answers = st.frozensets(st.integers(min_value=0, max_value=6), min_size=1, max_size=2)
    exposures = {item: draw(answers) for item in items}
    open_slots = {item: draw(st.integers(min_value=0, max_value=3)) for item in items}
    capacity = draw(st.integers(min_value=1, max_value=2))
    fresh = [Taker(capacity) for _ in range(draw(st.integers(min_value=0, max_value=8)))]
    others = fresh + draw(
        st.lists(
            st.builds(
                Taker,
                st.integers(min_value=0, max_value=2),
                st.frozensets(st.integers(min_value=0, max_value=6), max_size=3),
            ),
            max_size=4,
        )
    )
    me = Taker(capacity)
    return ItemGroup(open_slots, exposures, me, others), len(fresh)


@given(groups())
def test_where_the_counts_say_slack_no_candidate_strands_a_judgment(drawn):
    group, fresh = drawn
    open_judgments = sum(group.open_slots.values())
    if slack(open_judgments, fresh) < 0:
        return
    costs = stranding_costs(list(group.open_slots), dict.fromkeys(group.open_slots, group))
    assert set(costs.values()) <= {0}


def test_slack_counts_free_others_against_the_judgments_left_after_this_one():
    assert slack(open_judgments=5, free_others=4) == 0
    assert slack(open_judgments=5, free_others=3) == -1
    assert slack(open_judgments=0, free_others=0) == 1


def team_for(study, luffy, extra) -> list:
    (row,) = study_capacity(study)
    return [approved_annotator(f"team{i}@example.com", [luffy]) for i in range(row.needed + extra)]


@pytest.mark.django_db
def test_where_the_slack_lasts_a_tightly_staffed_study_keeps_its_plan(
    demo_dataset, luffy, monkeypatch
):
    study = make_study(overlap=5, rounds=(1,), characters=[luffy])
    (row,) = study_capacity(study)
    team = team_for(study, luffy, row.needed // 2)
    assert ordering.tightly_staffed(study) == {luffy.pk}
    matchings = spy_on(monkeypatch, lookahead, "_matched_costs")
    plans = spy_on(monkeypatch, worklists, "worklist_plan")

    annotator = team[0]
    for _ in range(3):
        submit_item(annotator, services.assignment_next(user=annotator, study=study))

    # One plan, by the scenarios' slack, for the three items.
    assert len(plans) == 1
    assert matchings == []


@pytest.mark.django_db
def test_with_little_slack_each_request_plans_with_the_look_ahead(demo_dataset, luffy, monkeypatch):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    team = team_for(study, luffy, 1)
    assert ordering.tightly_staffed(study) == {luffy.pk}
    plans = spy_on(monkeypatch, worklists, "worklist_plan")

    annotator = team[0]
    for _ in range(3):
        submit_item(annotator, services.assignment_next(user=annotator, study=study))

    assert len(plans) == 3
    assert lookahead.SLACK_LASTING > 1  # the slack here: one judgment to spare
