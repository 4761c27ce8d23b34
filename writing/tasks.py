"""Celery tasks of fan writing: thin and idempotent (see services)."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, reject_on_worker_lost=True)
def followup_simulate(task_id: int) -> str:
    """The user simulator's follow-up to a writer's round 1. A redelivered message finds the
    task no longer waiting and does nothing."""
    return services.followup_simulate(task_id=task_id)


@shared_task
def followups_catch_up() -> list[int]:
    """Beat: follow-ups whose task was lost on its way are asked for again."""
    return services.followups_waiting_resume()
