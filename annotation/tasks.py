"""Celery tasks: thin wrappers that fetch by id and call a service. All idempotent."""

import socket

from celery import shared_task

from . import services


@shared_task
def record_worker_heartbeat() -> str:
    hostname = record_worker_heartbeat.request.hostname or socket.gethostname()
    services.worker_heartbeat_record(hostname=hostname)
    return hostname
