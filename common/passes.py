"""Doing what a run still lacks, unit by unit, on as many threads as its endpoint takes.

A unit is whatever one app calls once per API request or so: a cell of a collection run,
a call of a judge run. The app says how to list the missing units, how to do one, which
outcome means the unit's failure was recorded (it is tried again in the next pass) and
which outcomes stop the run (a permanent error, staff stopping it). The per-endpoint
limiter inside each unit still holds the concurrency and the rate across processes; the
threads only keep that many units in flight from this one.
"""

import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection

# Units recorded as failed (transient errors past a call's retries, replies that never
# read as a verdict) get this many more passes before the command reports them.
EXTRA_PASSES = 1
_DONE = object()


@dataclass(frozen=True)
class Units[Unit]:
    """What a run supplies to `do_missing`."""

    missing: Callable[[], Sequence[Unit]]  # read again before each pass
    do: Callable[[Unit], str]  # on any thread; returns the unit's outcome
    failed: str  # the outcome of a unit whose failure was recorded
    stopping: frozenset[str]  # outcomes after which no other unit starts
    concurrency: Callable[[], int]  # the endpoint's, read at each pass
    still_running: Callable[[], bool]  # read from the database after each pass
    thread_name: str


def _work(
    units: Units, pending: queue.SimpleQueue, outcomes: queue.SimpleQueue, stop: threading.Event
) -> None:
    """One worker thread: takes units until none are left or the run stops. Its database
    connection lives as long as the thread, not one unit."""
    try:
        while not stop.is_set():
            try:
                unit = pending.get_nowait()
            except queue.Empty:
                break
            try:
                outcome = units.do(unit)
            except Exception as error:  # raised again by the main thread
                stop.set()
                outcomes.put(error)
                break
            outcomes.put(outcome)
            if outcome in units.stopping:
                # At once, not when the main thread hears of it: no unit starts after it.
                # Calls already in flight finish and are kept.
                stop.set()
                break
    finally:
        connection.close()
        outcomes.put(_DONE)


def _one_pass[Unit](
    units: Units[Unit], missing: Sequence[Unit], on_outcome: Callable[[str], None] | None
) -> int:
    """Does the missing units once; returns how many failed."""
    failed = 0
    if connection.vendor == "sqlite":
        # SQLite takes one writer at a time and an in-memory database refuses other
        # threads' writes outright: the embedded setup does unit after unit here.
        for unit in missing:
            outcome = units.do(unit)
            failed += outcome == units.failed
            if on_outcome is not None:
                on_outcome(outcome)
            if outcome in units.stopping:
                break
        return failed

    pending: queue.SimpleQueue = queue.SimpleQueue()
    for unit in missing:
        pending.put(unit)
    outcomes: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    width = min(max(1, units.concurrency()), len(missing))
    threads = [
        threading.Thread(
            target=_work,
            args=(units, pending, outcomes, stop),
            name=f"{units.thread_name}-{number}",
            daemon=True,
        )
        for number in range(width)
    ]
    for thread in threads:
        thread.start()
    running, crash = width, None
    while running:
        found = outcomes.get()
        if found is _DONE:
            running -= 1
            continue
        if isinstance(found, Exception):
            crash = crash or found
            continue
        failed += found == units.failed
        if on_outcome is not None:
            on_outcome(found)
    for thread in threads:
        thread.join()
    if crash is not None:
        raise crash
    return failed


def do_missing[Unit](units: Units[Unit], *, on_outcome: Callable[[str], None] | None = None) -> int:
    """Passes over the missing units until none is missing, the run stops or the extra
    passes are spent; returns how many units the last pass left failed."""
    failed = 0
    for _ in range(1 + EXTRA_PASSES):
        missing = units.missing()
        if not missing:
            break
        failed = _one_pass(units, missing, on_outcome)
        if not units.still_running():
            break
    return failed
