"""Celery tasks of the judges app: thin, calling services."""

from celery import shared_task

from . import services


@shared_task
def judge_figures_catch_up() -> list[int]:
    """Beat: judge runs whose study has new human judgments get their figures again."""
    return services.runs_figures_catch_up()
