"""Driving a judge run to the end from one process (the `judge_study` command).

Calls run on as many threads as the endpoint's concurrency; the collection app's
per-endpoint limiter still holds the concurrency and the rate across processes. Killed at
any moment, the run keeps only whole verdicts (each call's row and ratings are written in
one transaction), and the next start judges only what has no verdict yet.
"""

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection

from . import services
from .models import JudgeRun, JudgeRunStatus
from .selectors import PlannedCall, run_missing_calls

# Calls that failed (transient errors past their retries, invalid replies) get this many
# more passes before the command reports them.
EXTRA_PASSES = 1
_DONE = object()


@dataclass
class RunResult:
    status: str
    error: str
    failed_calls: int


def _judge_calls(run: JudgeRun, planned: queue.SimpleQueue, outcomes: queue.SimpleQueue, stop):
    try:
        while not stop.is_set():
            try:
                call = planned.get_nowait()
            except queue.Empty:
                break
            try:
                outcome = services.judge_call(run=run, planned=call)
            except Exception as error:  # raised again by the main thread
                outcomes.put(error)
                break
            outcomes.put((outcome, ""))
            if outcome == services.CallOutcome.PERMANENT:
                # At once, not when the main thread hears of it: no call starts after it.
                stop.set()
                break
    finally:
        connection.close()
        outcomes.put(_DONE)


def _one_pass(run: JudgeRun, calls: list[PlannedCall], on_call) -> int:
    failed = 0
    if connection.vendor == "sqlite":
        # SQLite takes one writer at a time: the embedded setup judges call after call.
        for call in calls:
            outcome = services.judge_call(run=run, planned=call)
            failed += outcome == services.CallOutcome.FAILED
            if on_call is not None:
                on_call(outcome)
            if outcome == services.CallOutcome.PERMANENT:
                break
        return failed
    pending: queue.SimpleQueue = queue.SimpleQueue()
    for call in calls:
        pending.put(call)
    outcomes: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    width = min(max(1, run.endpoint.concurrency), len(calls))
    threads = [
        threading.Thread(target=_judge_calls, args=(run, pending, outcomes, stop), daemon=True)
        for _ in range(width)
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
            stop.set()
            continue
        outcome = found[0]
        failed += outcome == services.CallOutcome.FAILED
        if outcome == services.CallOutcome.PERMANENT:
            stop.set()
        if on_call is not None:
            on_call(outcome)
    for thread in threads:
        thread.join()
    if crash is not None:
        raise crash
    return failed


def run_to_end(run: JudgeRun, *, on_call: Callable[[str], None] | None = None) -> RunResult:
    failed = 0
    for _ in range(1 + EXTRA_PASSES):
        calls = run_missing_calls(run)
        if not calls:
            break
        failed = _one_pass(run, calls, on_call)
        run.refresh_from_db()
        if run.status != JudgeRunStatus.RUNNING:
            break
    services.run_finish_if_complete(run=run)
    run.refresh_from_db()
    return RunResult(status=run.status, error=run.error, failed_calls=failed)
