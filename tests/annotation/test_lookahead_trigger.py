"""The look-ahead (`selectors.lookahead`) runs only where a greedy choice could strand a
judgment: not early in a study whose characters have many more approved annotators than
they need, where its reads would only slow every request down."""

import pytest

from annotation import services
from annotation.selectors import ordering, study_capacity
from annotation.selectors.staffing import staffing_forget
from tests.builders import approved_annotator, make_study
from tests.helpers import spy_on

pytestmark = pytest.mark.django_db


@pytest.fixture
def lookahead_calls(monkeypatch):
    calls = spy_on(monkeypatch, ordering, "stranding_costs_of")
    staffing_forget()
    return calls


@pytest.mark.parametrize("balance", [True, False])
def test_no_look_ahead_early_in_a_generously_staffed_study(demo_dataset, lookahead_calls, balance):
    study = make_study(overlap=1, rounds=(1,))
    study.balance_characters = balance
    study.save(update_fields=["balance_characters"])
    characters = list(study.characters.all())
    needed = max(row.needed for row in study_capacity(study))
    # Far more annotators than any character needs (like 180 where 20 would do).
    crowd = [approved_annotator(f"crowd{i}@example.com", characters) for i in range(4 * needed + 1)]
    assert all(row.approved > 2 * row.needed for row in study_capacity(study))

    for annotator in crowd[:3]:
        assert services.assignment_next(user=annotator, study=study) is not None

    assert lookahead_calls == []


def test_the_look_ahead_runs_for_a_character_staffed_with_what_it_needs(
    demo_dataset, lookahead_calls, luffy
):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    (row,) = study_capacity(study)
    team = [approved_annotator(f"team{i}@example.com", [luffy]) for i in range(row.needed)]

    assert services.assignment_next(user=team[0], study=study) is not None

    assert lookahead_calls != []
