"""The estimate of what an annotator has left, shown in the progress bar: work still open
in the study (counted per study and shared) less what this annotator already had."""

import pytest

from annotation import services
from annotation.models import Item, ItemKind
from annotation.selectors import eligibility
from tests.factories import approved_annotator
from tests.fixtures.studies import make_study
from tests.helpers import submit_item

pytestmark = pytest.mark.django_db


def test_a_new_annotator_has_one_item_per_open_scenario_and_one_set_per_character(
    demo_dataset, luffy
):
    study = make_study(characters=[luffy], include_diversity=True)
    alice = approved_annotator("alice@example.com", [luffy])
    scenarios = study.items.filter(kind=ItemKind.PAIR).values("scenario_id").distinct().count()

    assert eligibility.items_left_estimate(alice) == scenarios + 1


def test_what_the_annotator_had_and_what_others_completed_is_not_left(demo_dataset, luffy):
    study = make_study(characters=[luffy])
    alice = approved_annotator("alice@example.com", [luffy])
    before = eligibility.items_left_estimate(alice)

    lease = services.assignment_next(user=alice)
    submit_item(alice, lease)
    # Every pair of another scenario reached its overlap through other annotators.
    other = study.items.exclude(scenario=lease.item.scenario).first().scenario
    Item.objects.filter(study=study, scenario=other).update(judgment_count=study.overlap)
    eligibility._open_work.clear()  # counted again at once, not within OPEN_WORK_SECONDS

    assert eligibility.items_left_estimate(alice) == before - 2
