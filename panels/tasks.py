"""Celery tasks of the panels app: thin and idempotent (see services)."""

from celery import shared_task

from . import services


@shared_task
def participants_time_out() -> list[int]:
    """Beat, every minute: participants past their deadline are timed out and their
    leases freed, even those who never ask for another item. Running it twice, or beside
    a participant's own request, times nobody out twice."""
    return services.participants_overdue_time_out()
