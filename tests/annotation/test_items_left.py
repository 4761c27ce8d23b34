"""The estimate of what an annotator has left, shown in the progress bar: work still open
in the study (counted per study and shared) less what this annotator already had."""

import pytest

from annotation import services
from annotation.models import Item, ItemKind
from annotation.selectors import eligibility
from tests.builders import approved_annotator, make_study
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
    eligibility.open_work_forget(study)  # counted again at once, not within OPEN_WORK_SECONDS

    assert eligibility.items_left_estimate(alice) == before - 2


class CacheReads:
    """Counts the cache's reads of the items-left copies, answering as the cache would."""

    def __init__(self, monkeypatch):
        from django.core.cache import cache

        self.keys = []
        get = cache.get

        def counted(key, *args, **kwargs):
            if key.startswith("items-left-taken:"):
                self.keys.append(key)
            return get(key, *args, **kwargs)

        monkeypatch.setattr(cache, "get", counted)


def test_a_process_keeps_the_estimate_it_read_until_its_two_minutes_are_over(
    demo_dataset, luffy, monkeypatch
):
    from annotation.selectors import progress
    from common import kept

    make_study(characters=[luffy])
    alice = approved_annotator("alice@example.com", [luffy])
    reads = CacheReads(monkeypatch)
    clock = [1_000_000.0]
    # The shared copy says until when by the wall clock; this process's copy keeps it by
    # the monotonic clock (common.kept): both move together.
    monkeypatch.setattr(progress.time, "time", lambda: clock[0])
    monkeypatch.setattr(kept.time, "monotonic", lambda: clock[0])

    first = progress._items_left(alice, taken=0)
    assert progress._items_left(alice, taken=2) == first - 2  # lowered by items taken since
    assert len(reads.keys) == 1  # the second from this process's copy

    clock[0] += progress.ITEMS_LEFT_SECONDS + 1
    progress._items_left(alice, taken=2)
    assert len(reads.keys) == 2  # over: read (and here estimated) again


def test_an_estimate_another_process_made_is_taken_from_the_cache(demo_dataset, luffy, monkeypatch):
    from django.core.cache import cache

    from annotation.selectors import progress

    make_study(characters=[luffy])
    alice = approved_annotator("alice@example.com", [luffy])
    cache.set(f"items-left-taken:{alice.pk}", (40, 3, progress.time.time() + 60), 60)
    monkeypatch.setattr(
        eligibility, "items_left_estimate", lambda user: pytest.fail("estimated again")
    )

    assert progress._items_left(alice, taken=5) == 38


def test_an_estimate_kept_before_copies_said_until_when_is_made_afresh(demo_dataset, luffy):
    from django.core.cache import cache

    from annotation.selectors import progress

    make_study(characters=[luffy])
    alice = approved_annotator("alice@example.com", [luffy])
    cache.set(f"items-left-taken:{alice.pk}", (40, 3), 60)

    assert progress._items_left(alice, taken=0) == eligibility.items_left_estimate(alice)
    assert len(cache.get(f"items-left-taken:{alice.pk}")) == 3
