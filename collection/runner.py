"""Driving a run to the end from one process (the `collect_answers` command).

Cells run on as many threads as the endpoint's concurrency; the per-endpoint limiter
still applies, so a command and workers sharing an endpoint stay within its limits
together. Killed at any moment, the process leaves only whole answers behind (each is one
row written in one transaction), and the next start collects only what is missing.
"""

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection

from . import services
from .models import CollectionRun, RunStatus
from .selectors import run_missing_cells

# Cells whose transient errors outlasted a call's retries get this many more passes.
EXTRA_PASSES = 1
_DONE = object()


@dataclass
class RunResult:
    status: str
    error: str
    failed_cells: int


def _collect_cells(run_id: int, cells: queue.SimpleQueue, outcomes: queue.SimpleQueue, stop):
    """One worker thread: takes cells until none are left or the run stops. Its database
    connection lives as long as the thread, not one cell."""
    try:
        while not stop.is_set():
            try:
                character_id, scenario_id = cells.get_nowait()
            except queue.Empty:
                break
            try:
                outcome = services.cell_collect_by_id(
                    run_id=run_id, character_id=character_id, scenario_id=scenario_id
                )
            except Exception as error:  # reported, and raised again, by the main thread
                outcomes.put(error)
                break
            outcomes.put(outcome)
    finally:
        connection.close()
        outcomes.put(_DONE)


def _one_pass(run: CollectionRun, cells, on_cell) -> int:
    if connection.vendor == "sqlite":
        # SQLite takes one writer at a time and an in-memory database refuses other
        # threads' writes outright: the embedded setup collects cell after cell here.
        failed = 0
        for character, scenario in cells:
            outcome = services.cell_collect(run=run, character=character, scenario=scenario)
            failed += outcome == services.CellOutcome.FAILED
            if on_cell is not None:
                on_cell(outcome)
            if outcome in (services.CellOutcome.PERMANENT, services.CellOutcome.STOPPED):
                break
        return failed

    pending: queue.SimpleQueue = queue.SimpleQueue()
    for character, scenario in cells:
        pending.put((character.pk, scenario.pk))
    outcomes: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()
    width = min(max(1, run.endpoint.concurrency), len(cells))
    threads = [
        threading.Thread(
            target=_collect_cells,
            args=(run.pk, pending, outcomes, stop),
            name=f"collect-{number}",
            daemon=True,
        )
        for number in range(width)
    ]
    for thread in threads:
        thread.start()
    failed, running, crash = 0, width, None
    while running:
        outcome = outcomes.get()
        if outcome is _DONE:
            running -= 1
            continue
        if isinstance(outcome, Exception):
            crash = crash or outcome
            stop.set()
            continue
        failed += outcome == services.CellOutcome.FAILED
        if outcome in (services.CellOutcome.PERMANENT, services.CellOutcome.STOPPED):
            # Leave the rest unstarted; calls in flight finish and are kept.
            stop.set()
        if on_cell is not None:
            on_cell(outcome)
    for thread in threads:
        thread.join()
    if crash is not None:
        raise crash
    return failed


def run_to_end(run: CollectionRun, *, on_cell: Callable[[str], None] | None = None) -> RunResult:
    failed = 0
    for _ in range(1 + EXTRA_PASSES):
        cells = run_missing_cells(run)
        if not cells:
            break
        failed = _one_pass(run, cells, on_cell)
        run.refresh_from_db()
        if run.status != RunStatus.RUNNING:
            break
    services.run_finish_if_complete(run=run)
    run.refresh_from_db()
    return RunResult(status=run.status, error=run.error, failed_cells=failed)
