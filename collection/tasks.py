"""Celery tasks for collection runs started from the staff pages. Thin and idempotent:
a redelivered cell task finds the cell's answers in place and calls no model."""

from celery import shared_task

from common import enqueue

from . import services
from .models import CollectionRun, RunStatus
from .selectors import run_missing_cells


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def collection_run_enqueue(self, run_id: int) -> int:
    """Enqueue one task per cell the run still lacks (all of them for a new run)."""
    run = CollectionRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).first()
    if run is None:
        return 0
    cells = run_missing_cells(run)
    # The cells go to the queue this task came from, so routing the collection to
    # dedicated workers routes all of its work there.
    queue = (self.request.delivery_info or {}).get("routing_key")
    for character, scenario in cells:
        enqueue.send(services.CELL_COLLECT_TASK, run.pk, character.pk, scenario.pk, queue=queue)
    if not cells:
        services.run_finish_if_complete(run=run)
    return len(cells)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def collection_cell_collect(run_id: int, character_id: int, scenario_id: int) -> str:
    outcome = services.cell_collect_by_id(
        run_id=run_id, character_id=character_id, scenario_id=scenario_id
    )
    run = CollectionRun.objects.filter(pk=run_id).first()
    if run is not None and outcome == services.CellOutcome.DONE:
        services.run_finish_if_complete(run=run)
    return outcome


@shared_task
def collection_runs_catch_up() -> list[int]:
    """Beat: running runs whose tasks were lost are sent again."""
    return services.runs_stalled_resume()
