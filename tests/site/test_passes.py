"""The runner collection and judge runs share (common/passes.py), with units that call no
model: threads within the concurrency, a stop at once, a crash raised, the extra pass.
The apps' own tests run it against the test servers, on threads on PostgreSQL."""

import threading
import time
from types import SimpleNamespace

import pytest

from common import passes


class Ledger:
    """Units 0..n-1 and what happened to them; `outcome_of` says how each one ends."""

    def __init__(self, count, outcome_of=lambda unit, attempt: "done", seconds=0.0):
        self.todo = set(range(count))
        self.outcome_of = outcome_of
        self.seconds = seconds
        self.lock = threading.Lock()
        self.attempts: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.running = True

    def do(self, unit):
        with self.lock:
            self.attempts.append(unit)
            attempt = self.attempts.count(unit)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.seconds)
        outcome = self.outcome_of(unit, attempt)
        with self.lock:
            self.in_flight -= 1
            if outcome == "done":
                self.todo.discard(unit)
            if outcome == "permanent":
                self.running = False
        return outcome

    def units(self, concurrency=3):
        return passes.Units(
            missing=lambda: sorted(self.todo),
            do=self.do,
            failed="failed",
            stopping=frozenset({"permanent"}),
            concurrency=lambda: concurrency,
            still_running=lambda: self.running,
            thread_name="test",
        )


@pytest.fixture(params=["threads", "sqlite"])
def vendor(request, monkeypatch):
    """The threads of PostgreSQL, and SQLite's one unit after another."""
    database = "postgresql" if request.param == "threads" else "sqlite"
    monkeypatch.setattr(passes, "connection", SimpleNamespace(vendor=database, close=lambda: None))
    return request.param


def test_every_missing_unit_is_done_once_within_the_concurrency(vendor):
    ledger = Ledger(12, seconds=0.01)
    heard = []

    failed = passes.do_missing(ledger.units(concurrency=3), on_outcome=heard.append)

    assert failed == 0 and not ledger.todo
    assert sorted(ledger.attempts) == list(range(12)) and heard == ["done"] * 12
    assert ledger.most_in_flight == (3 if vendor == "threads" else 1)


def test_a_failed_unit_gets_one_more_pass_and_the_last_pass_counts_the_failures(vendor):
    ledger = Ledger(6, outcome_of=lambda unit, attempt: "failed" if unit < 2 else "done")

    failed = passes.do_missing(ledger.units())

    assert failed == 2 and ledger.todo == {0, 1}
    assert ledger.attempts.count(0) == ledger.attempts.count(1) == 1 + passes.EXTRA_PASSES
    assert all(ledger.attempts.count(unit) == 1 for unit in range(2, 6))


def test_a_unit_failed_once_is_done_in_the_extra_pass(vendor):
    ledger = Ledger(4, outcome_of=lambda unit, attempt: "failed" if attempt == 1 else "done")
    assert passes.do_missing(ledger.units()) == 0 and not ledger.todo


def test_no_unit_starts_after_a_permanent_error_and_there_is_no_extra_pass(vendor):
    ledger = Ledger(40, outcome_of=lambda unit, attempt: "permanent" if unit == 0 else "done")

    passes.do_missing(ledger.units(concurrency=1))

    assert ledger.attempts == [0] and not ledger.running


def test_a_crash_in_a_unit_is_raised_and_stops_the_run(vendor):
    def do(unit):
        raise RuntimeError(f"bug in unit {unit}")

    units = passes.Units(
        missing=lambda: list(range(10)),
        do=do,
        failed="failed",
        stopping=frozenset(),
        concurrency=lambda: 2,
        still_running=lambda: True,
        thread_name="test",
    )
    with pytest.raises(RuntimeError, match="bug in unit"):
        passes.do_missing(units)


def test_nothing_missing_does_nothing(vendor):
    ledger = Ledger(0)
    assert passes.do_missing(ledger.units()) == 0 and ledger.attempts == []
