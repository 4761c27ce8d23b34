"""Driving a run to the end from one process (the `collect_answers` command).

Cells run on as many threads as the endpoint's concurrency (`common.passes`); the
per-endpoint limiter still applies, so a command and workers sharing an endpoint stay
within its limits together. Killed at any moment, the process leaves only whole answers
behind (each is one row written in one transaction), and the next start collects only
what is missing.
"""

from collections.abc import Callable
from dataclasses import dataclass

from common.passes import Units, do_missing
from dialogues.models import Character, Scenario

from . import services
from .models import CollectionRun, RunStatus
from .selectors import run_missing_cells


@dataclass
class RunResult:
    status: str
    error: str
    failed_cells: int


def run_to_end(run: CollectionRun, *, on_cell: Callable[[str], None] | None = None) -> RunResult:
    def collect(cell: tuple[Character, Scenario]) -> str:
        character, scenario = cell
        # By id: each thread reads its own run, whose status the cell refreshes.
        return services.cell_collect_by_id(
            run_id=run.pk, character_id=character.pk, scenario_id=scenario.pk
        )

    def still_running() -> bool:
        run.refresh_from_db()
        return run.status == RunStatus.RUNNING

    failed = do_missing(
        Units(
            missing=lambda: run_missing_cells(run),
            do=collect,
            failed=services.CellOutcome.FAILED,
            stopping=frozenset({services.CellOutcome.PERMANENT, services.CellOutcome.STOPPED}),
            concurrency=lambda: run.endpoint.concurrency,
            still_running=still_running,
            thread_name="collect",
        ),
        on_outcome=on_cell,
    )
    services.run_finish_if_complete(run=run)
    run.refresh_from_db()
    return RunResult(status=run.status, error=run.error, failed_cells=failed)
