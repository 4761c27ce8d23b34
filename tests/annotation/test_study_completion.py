"""A study finishes with exactly the annotators it needs: simulated annotators, each
taking items in turn through the real assignment service on PostgreSQL, leave no
judgment undone whatever the (random) order of the items."""

import pytest

from annotation.models import ItemKind
from annotation.selectors import study_capacity
from annotation.simulation import annotators_for, simulate_study
from tests.builders import make_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exactly_the_needed_annotators_finish_a_study_with_diversity_sets(
    postgres, demo_dataset, settings, seed
):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    # Overlap 2 over round 1: the tightest design, where each of the 8 annotators must
    # rate a diversity set and then exactly one pair in every scenario they may still
    # take.
    study = make_study(overlap=2, rounds=(1,), include_diversity=True)
    assert {row.needed for row in study_capacity(study)} == {8}

    made, _truth = simulate_study(study=study, annotators=annotators_for(study), seed=seed)

    undone = {
        (item.kind, item.pk): item.judgment_count
        for item in study.items.all()
        if item.judgment_count < study.overlap
    }
    assert undone == {}
    assert made == study.items.count() * study.overlap == 168
    assert study.items.filter(kind=ItemKind.DIVERSITY).count() == 12
