"""Celery tasks: thin wrappers that fetch by id and call a service. All idempotent,
because Redis redelivers work whose worker died before acknowledging it. Services send
them by name through common.enqueue, so that nothing but Celery imports this module
(AnnotationConfig.ready registers the tasks in every process)."""

import socket

from celery import Task, shared_task
from celery.exceptions import TimeLimitExceeded
from django.db import connection

from . import services
from .models import ExportJob, Study

# Writing an export file streams every rating of a study (about a minute for 1.3 million
# on a busy machine), so it gets longer than the default limits of the settings; at the
# soft limit the job is marked failed with the reason. The hard limit stays below the
# broker's visibility timeout (an hour by default) so a running export is not redelivered.
EXPORT_SOFT_TIME_LIMIT = 45 * 60
EXPORT_TIME_LIMIT = EXPORT_SOFT_TIME_LIMIT + 5 * 60


@shared_task
def record_worker_heartbeat() -> str:
    hostname = record_worker_heartbeat.request.hostname or socket.gethostname()
    services.worker_heartbeat_record(hostname=hostname)
    return hostname


@shared_task(acks_late=True, reject_on_worker_lost=True)
def study_results_refresh(study_id: int) -> None:
    """Recompute what is derived from a study's judgments. A worker that dies half-way
    leaves the task unacknowledged, so another worker runs it again from the start; the
    recompute replaces one results document, so running it twice changes nothing."""
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return
    services.study_recompute(study=study)


@shared_task
def open_studies_refresh() -> int:
    """The beat schedule's safety net for refreshes that could not be enqueued."""
    return services.open_studies_refresh()


@shared_task
def leases_expire() -> int:
    return services.leases_expire()


class ExportTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        """At the hard time limit the worker kills the child process writing the file and
        calls this in its main process: the job is marked failed there."""
        if isinstance(exc, TimeLimitExceeded) and args:
            services.export_job_killed(job_id=args[0])
            # The main process forks the next children: it keeps no connection open.
            connection.close()


@shared_task(
    base=ExportTask,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=EXPORT_SOFT_TIME_LIMIT,
    time_limit=EXPORT_TIME_LIMIT,
)
def export_job_run(job_id: int) -> str | None:
    """Write a requested export file (see services.export_job_run). Acknowledged only when
    done, so that a worker that dies half-way leaves the job to another."""
    job = ExportJob.objects.filter(pk=job_id).first()
    if job is None:
        return None
    return services.export_job_run(job=job).status


@shared_task
def export_jobs_tidy() -> dict:
    """The beat schedule's safety net for export jobs (see services.export_jobs_tidy)."""
    return services.export_jobs_tidy()
