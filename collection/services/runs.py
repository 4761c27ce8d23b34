"""Collection runs: started or continued for a source, failed, finished, paused, resumed
or cancelled, and handed to the workers."""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from annotation.models import AuditAction
from annotation.services import audit
from common import enqueue
from common.run_controls import RunControls
from dialogues.models import Character, Scenario, SourceKind
from dialogues.services import SourceKindConflict, source_get_or_create

from ..models import CollectionRun, EndpointKeyMissing, ModelEndpoint, RunStatus
from ..prompts import DEFAULT_SIMULATOR_PROMPT
from .errors import CollectionError

# Records keep the logger name they had before the services became a package.
logger = logging.getLogger("collection.services")


def run_start(
    *,
    source_slug: str,
    endpoint: ModelEndpoint,
    simulator_endpoint: ModelEndpoint,
    characters: list[Character],
    scenarios: list[Scenario],
    rounds: list[int],
    simulator_prompt: str = "",
    created_by=None,
) -> CollectionRun:
    """Continue the source's unfinished run with this selection, or start a new one.
    Both endpoints' keys are read first, so a missing key creates nothing."""
    for each in (endpoint, simulator_endpoint):
        try:
            each.api_key()
        except EndpointKeyMissing as error:
            raise CollectionError("missing_key", str(error)) from None
    with transaction.atomic():
        try:
            source, _ = source_get_or_create(slug=source_slug, kind=SourceKind.LLM)
        except SourceKindConflict:
            raise CollectionError(
                "human_source", f"source {source_slug!r} holds human answers; choose another slug"
            ) from None
        run = (
            CollectionRun.objects.select_for_update()
            .filter(
                source=source, status__in=(RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.FAILED)
            )
            .first()
        )
        fields = {
            "endpoint": endpoint,
            "simulator_endpoint": simulator_endpoint,
            "simulator_prompt": simulator_prompt or DEFAULT_SIMULATOR_PROMPT,
            "scenario_numbers": [s.number for s in scenarios],
            "rounds": rounds,
            "status": RunStatus.RUNNING,
            "error": "",
            "finished_at": None,
        }
        continued = run is not None
        if run is None:
            run = CollectionRun.objects.create(source=source, created_by=created_by, **fields)
        else:
            for name, value in fields.items():
                setattr(run, name, value)
            run.save()
        run.characters.set(characters)
        audit.record(
            actor=created_by,
            action=AuditAction.COLLECTION_RUN_START,
            target=run,
            target_label=_run_label(run),
            after={
                "source": source.slug,
                "endpoint": endpoint.name,
                "simulator": simulator_endpoint.name,
                # Which ones, not how many (runs audited before this recorded counts).
                "characters": sorted(c.pk for c in characters),
                "scenarios": sorted(s.number for s in scenarios),
                "rounds": rounds,
                "continued": continued,
            },
        )
    return run


def _run_label(run: CollectionRun) -> str:
    return f"{run.source.slug} #{run.pk}"


def run_fail(*, run: CollectionRun, error: str) -> None:
    CollectionRun.objects.filter(pk=run.pk).exclude(status=RunStatus.CANCELLED).update(
        status=RunStatus.FAILED, error=error[:4000]
    )
    run.refresh_from_db(fields=["status", "error"])
    logger.warning("collection run %s failed: %s", run.pk, error)


def run_finish_if_complete(*, run: CollectionRun) -> bool:
    from ..selectors import run_missing_cells

    if run_missing_cells(run):
        return False
    CollectionRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
        status=RunStatus.FINISHED, finished_at=timezone.now()
    )
    run.refresh_from_db(fields=["status", "finished_at"])
    return run.status == RunStatus.FINISHED


def run_control(*, run: CollectionRun, action: str, by=None) -> CollectionRun:
    """Pause, resume or cancel. Cells in flight finish their current call and stop; the
    answers collected so far stay. Resuming enqueues the missing cells again."""
    return _CONTROLS.apply(run=run, action=action, by=by)


RUN_ENQUEUE_TASK = "collection.tasks.collection_run_enqueue"
CELL_COLLECT_TASK = "collection.tasks.collection_cell_collect"
# A running run that has called no model for this long has lost its tasks (a broker that
# was down when they were sent, a worker killed between messages): the beat sends it again.
STALLED_AFTER = timedelta(minutes=10)


def run_enqueue(*, run: CollectionRun) -> None:
    """Hand the run's missing cells to the workers once the transaction commits; with the
    broker down, `runs_stalled_resume` sends them later."""
    enqueue.on_commit(RUN_ENQUEUE_TASK, run.pk, long_running=True)


def runs_stalled_resume() -> list[int]:
    """Send again every running run that has been quiet for `STALLED_AFTER`. A cell task
    that arrives twice finds its answers in place and calls no model."""
    quiet_since = timezone.now() - STALLED_AFTER
    stalled = (
        CollectionRun.objects.filter(status=RunStatus.RUNNING, created_at__lt=quiet_since)
        .annotate(last_call=Max("calls__created_at"))
        .filter(Q(last_call__isnull=True) | Q(last_call__lt=quiet_since))
        .values_list("pk", flat=True)
    )
    resumed = [pk for pk in stalled if enqueue.send(RUN_ENQUEUE_TASK, pk)]
    if resumed:
        logger.info("sent %d stalled collection run(s) again: %s", len(resumed), resumed)
    return resumed


_CONTROLS = RunControls(
    model=CollectionRun,
    statuses=RunStatus,
    audited={
        "pause": AuditAction.COLLECTION_RUN_PAUSE,
        "resume": AuditAction.COLLECTION_RUN_RESUME,
        "cancel": AuditAction.COLLECTION_RUN_CANCEL,
    },
    refusal=CollectionError,
    record=audit.record,
    enqueue=run_enqueue,
)
