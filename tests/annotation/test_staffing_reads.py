"""Reading a study's shared staffing costs a request as few round trips to the cache as it
can: the look-ahead's slack reads the raters and who is at their cap in one, and values
read together keep the rules each has alone (the staffing generation, the age limit)."""

import time
from types import SimpleNamespace

import pytest
from django.utils import timezone

from annotation.models import Item, ItemKind
from annotation.selectors import lookahead, staffing, study_capacity
from tests.builders import approved_annotator, make_study


class CountingCache:
    """The cache, with the name of each call made through it."""

    def __init__(self, real):
        self.real = real
        self.calls: list[str] = []

    def __getattr__(self, name):
        found = getattr(self.real, name)
        if not callable(found):
            return found

        def counted(*args, **kwargs):
            self.calls.append(name)
            return found(*args, **kwargs)

        return counted


@pytest.fixture
def cache_calls(monkeypatch) -> list[str]:
    counting = CountingCache(staffing.cache)
    monkeypatch.setattr(staffing, "cache", counting)
    return counting.calls


@pytest.fixture
def tight_study(demo_dataset, luffy):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    (row,) = study_capacity(study)
    team = [approved_annotator(f"team{i}@example.com", [luffy]) for i in range(row.needed)]
    item = Item.objects.filter(study=study, kind=ItemKind.PAIR, is_gold=False).first()
    return study, team[0], {(item.character_id, item.scenario_id)}


@pytest.mark.django_db
def test_the_slack_reads_the_raters_and_their_caps_in_one_round_trip(tight_study, cache_calls):
    study, annotator, groups = tight_study
    staffing.staffing_forget()
    cache_calls.clear()

    first = lookahead.groups_with_slack(annotator, study, groups, timezone.now())

    # Nothing shared yet: one read, and the two values read afresh written back at once.
    assert cache_calls == ["get_many", "set_many"]
    cache_calls.clear()

    again = lookahead.groups_with_slack(annotator, study, groups, timezone.now())

    assert cache_calls == ["get_many"]
    assert again == first


@pytest.mark.django_db
def test_values_read_together_are_those_read_one_by_one(tight_study, luffy):
    study, _annotator, _groups = tight_study
    staffing.staffing_forget()
    raters, capped = staffing.raters_and_capped(study, [luffy.pk])
    assert raters == staffing.raters_by_character(study, [luffy.pk])
    assert capped == staffing.at_their_cap(study)
    assert len(raters[luffy.pk]) >= 1


class Reads:
    """Shared values that count how often they are read from their source."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def of(self, name: str):
        def read():
            self.counts[name] = self.counts.get(name, 0) + 1
            return f"{name} #{self.counts[name]}"

        return ("test reads", name), read


@pytest.mark.django_db
def test_a_staff_change_makes_every_value_read_together_read_afresh():
    reads = Reads()
    staffing.staffing_forget()
    together = [reads.of("raters"), reads.of("capped")]

    assert staffing.shared_many(together) == ["raters #1", "capped #1"]
    assert staffing.shared_many(together) == ["raters #1", "capped #1"]
    staffing.staffing_changed()
    assert staffing.shared_many(together) == ["raters #2", "capped #2"]


@pytest.mark.django_db
def test_only_the_copies_read_too_long_ago_are_read_again(monkeypatch):
    reads = Reads()
    staffing.staffing_forget()
    clock = [1_000_000.0]
    monkeypatch.setattr(
        staffing, "time", SimpleNamespace(time=lambda: clock[0], time_ns=time.time_ns)
    )

    assert staffing.shared_many([reads.of("old")], seconds=60) == ["old #1"]
    clock[0] += 45
    assert staffing.shared_many([reads.of("new")], seconds=60) == ["new #1"]
    clock[0] += 30  # "old" was read 75 s ago, "new" 30 s ago

    assert staffing.shared_many([reads.of("old"), reads.of("new")], seconds=60) == [
        "old #2",
        "new #1",
    ]
