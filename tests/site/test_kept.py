"""common.kept: what a process keeps of a read, for how long, and forgetting it."""

import pytest

from common import kept
from common.kept import Kept


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(kept.time, "monotonic", lambda: now[0])
    return now


def test_a_read_is_kept_for_its_seconds_then_read_again(clock):
    reads = []
    copies = Kept(10)

    def read():
        reads.append(clock[0])
        return len(reads)

    assert copies.read("study-1", read) == 1
    clock[0] = 109.5
    assert copies.read("study-1", read) == 1
    clock[0] = 110.5
    assert copies.read("study-1", read) == 2
    assert reads == [100.0, 110.5]


def test_a_value_kept_for_its_own_time_goes_stale_then(clock):
    copies = Kept(60)
    copies.keep("alice", "estimate", seconds=5)
    clock[0] += 4
    assert copies.get("alice") == "estimate"
    clock[0] += 2
    assert copies.get("alice") is None


def test_too_many_copies_are_dropped_whole_never_grown_past_the_limit(clock):
    copies = Kept(60, most=3)
    for key in range(3):
        copies.keep(key, key)
    copies.keep(2, "again")  # a key already kept replaces its copy
    assert len(copies) == 3
    copies.keep(3, 3)
    assert len(copies) == 1 and copies.get(3) == 3 and copies.get(0) is None


def test_one_call_forgets_every_copy_kept_anywhere(clock):
    first, second = Kept(60), Kept(60)
    first.keep("a", 1)
    second.keep("b", 2)
    second.forget("b")
    second.keep("c", 3)

    kept.forget_all()

    assert (first.get("a"), second.get("c")) == (None, None)
