"""Celery tasks of the judges app: thin and idempotent. A redelivered call task finds its
verdict in place and calls no model."""

from celery import shared_task

from common import enqueue

from . import services
from .models import JudgeRun, JudgeRunStatus
from .selectors import PlannedCall, run_missing_calls


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def judge_run_enqueue(self, run_id: int) -> int:
    """One task per verdict the run still lacks."""
    run = JudgeRun.objects.filter(pk=run_id, status=JudgeRunStatus.RUNNING).first()
    if run is None:
        return 0
    calls = run_missing_calls(run)
    # To the queue this task came from: routing the judge to its workers routes its calls.
    queue = (self.request.delivery_info or {}).get("routing_key")
    for call in calls:
        enqueue.send(
            services.CALL_TASK, run.pk, call.item_id, call.order, call.left_slot, queue=queue
        )
    if not calls and services.run_finish_if_complete(run=run):
        services.run_figures_refresh(run=run)
    return len(calls)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def judge_call(run_id: int, item_id: int, order: int, left_slot: int) -> str:
    run = (
        JudgeRun.objects.filter(pk=run_id, status=JudgeRunStatus.RUNNING)
        .select_related("study", "endpoint")
        .first()
    )
    if run is None:
        return services.CallOutcome.STOPPED
    outcome = services.judge_call(run=run, planned=PlannedCall(item_id, order, left_slot))
    if outcome == services.CallOutcome.RATED and services.run_finish_if_complete(run=run):
        # The pages show the figures as of the run's last verdict.
        services.run_figures_refresh(run=run)
    return outcome


@shared_task
def judge_figures_catch_up() -> list[int]:
    """Beat: judge runs whose study has new human judgments get their figures again."""
    return services.runs_figures_catch_up()
