"""Export files prepared by a worker: requested from the results page, written with the
same streaming export as the direct download, downloaded when ready."""

import hashlib
import logging
import os
import shutil
import tempfile
import zipfile
from datetime import timedelta
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from common import enqueue

from .. import exports
from ..models import ExportJob, ExportKind, ExportStatus
from .errors import AnnotationError

logger = logging.getLogger(__name__)

EXPORT_DIRECTORY = "exports"
EXPORT_JOB_RUN_TASK = "annotation.tasks.export_job_run"
SUFFIXES = {"csv": "csv", "wide": "csv", "jsonl": "jsonl", "snapshot": "zip"}
TIME_LIMIT_ERROR = (
    "stopped at the workers' time limit for export files;"
    " for a study this large, write the file with `manage.py export_ratings`"
)
KILLED_AT_TIME_LIMIT_ERROR = (
    "the worker writing it was killed at the hard time limit for export files;"
    " for a study this large, write the file with `manage.py export_ratings`"
)


def export_job_request(*, study, user, kind: str, include_excluded=False, bom=False) -> ExportJob:
    """Record the request and have a worker write the file once it is committed."""
    if kind not in ExportKind.values:
        raise AnnotationError("export_kind", _("Unknown export format."))
    with transaction.atomic():
        job = ExportJob.objects.create(
            study=study,
            requested_by=user,
            kind=kind,
            include_excluded=include_excluded,
            bom=bom,
        )

        def unreachable():
            # Say so on the job instead of leaving it queued forever.
            ExportJob.objects.filter(pk=job.pk).update(
                status=ExportStatus.FAILED,
                error="could not reach the workers: the task queue is unreachable",
                finished_at=timezone.now(),
            )

        enqueue.on_commit(
            EXPORT_JOB_RUN_TASK, job.pk, if_unreachable=unreachable, long_running=True
        )
    return job


def export_job_run(*, job: ExportJob) -> ExportJob:
    """Write the job's file. Idempotent: a finished job is left alone, and a job whose
    worker died is written again from the start (the file appears only when complete)."""
    claimed = ExportJob.objects.filter(
        pk=job.pk, status__in=[ExportStatus.QUEUED, ExportStatus.RUNNING]
    ).update(status=ExportStatus.RUNNING, started_at=timezone.now(), error="")
    if not claimed:
        job.refresh_from_db()
        return job
    job.refresh_from_db()
    directory = Path(settings.MEDIA_ROOT) / EXPORT_DIRECTORY
    name = f"{job.study.slug}-{job.pk}-{job.kind}.{SUFFIXES[job.kind]}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        summary = _write(job, directory, name)
    except SoftTimeLimitExceeded:
        # The worker's time limit for export files stopped it; the partial file is gone.
        logger.error("export job %s stopped at the time limit", job.pk)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.FAILED, error=TIME_LIMIT_ERROR, finished_at=timezone.now()
        )
    except Exception as error:
        logger.exception("export job %s failed", job.pk)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.FAILED,
            error=f"{type(error).__name__}: {error}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.DONE,
            file=f"{EXPORT_DIRECTORY}/{name}",
            rows=summary.rows,
            size=summary.bytes,
            sha256=summary.sha256,
            finished_at=timezone.now(),
        )
    job.refresh_from_db()
    return job


def export_job_killed(*, job_id: int) -> bool:
    """Record that the worker writing the job was killed at its hard time limit (its
    soft limit did not stop it). Without this the job would stay running until the
    tidy-up sends it again, to be killed again. True when the job was still unfinished."""
    logger.error("export job %s killed at the hard time limit", job_id)
    return bool(
        ExportJob.objects.filter(
            pk=job_id, status__in=[ExportStatus.QUEUED, ExportStatus.RUNNING]
        ).update(
            status=ExportStatus.FAILED,
            error=KILLED_AT_TIME_LIMIT_ERROR,
            finished_at=timezone.now(),
        )
    )


# A job still queued after this long lost its message (a broker restart, a failed send
# after the commit); one running this long lost its worker without the message coming back.
REQUEUE_QUEUED_AFTER = timedelta(minutes=10)
REQUEUE_RUNNING_AFTER = timedelta(hours=2)


def export_jobs_tidy(*, now=None) -> dict:
    """Send stuck jobs to the workers again, delete files older than
    CHATANIME_EXPORT_KEEP_DAYS (the job stays listed as expired) and what killed workers
    left half-written. Safe to run at any time: running a job twice writes the same file."""
    now = now or timezone.now()
    stuck = ExportJob.objects.filter(
        Q(status=ExportStatus.QUEUED, created_at__lt=now - REQUEUE_QUEUED_AFTER)
        | Q(status=ExportStatus.RUNNING, started_at__lt=now - REQUEUE_RUNNING_AFTER)
    ).values_list("pk", flat=True)
    requeued = 0
    for job_id in stuck:
        requeued += enqueue.send(EXPORT_JOB_RUN_TASK, job_id)
    expired = 0
    old = ExportJob.objects.filter(
        status=ExportStatus.DONE,
        finished_at__lt=now - timedelta(days=settings.CHATANIME_EXPORT_KEEP_DAYS),
    )
    for job in old:
        if job.file:
            job.file.storage.delete(job.file.name)  # a file already gone is no error
            job.file.storage.delete(manifest_name(job.file.name))
        ExportJob.objects.filter(pk=job.pk, status=ExportStatus.DONE).update(
            status=ExportStatus.EXPIRED, file=""
        )
        expired += 1
    _remove_abandoned_partials(now - REQUEUE_RUNNING_AFTER)
    return {"requeued": requeued, "expired": expired}


def manifest_name(file_name: str) -> str:
    """The storage name of a job file's manifest (`NAME.manifest.json` beside it); a
    snapshot carries its manifest inside the zip instead."""
    return str(exports.file_manifest_path(file_name))


def _remove_abandoned_partials(before) -> None:
    """A worker killed while writing leaves its partial file (or snapshot staging folder),
    whose name starts with a dot; one older than any running job can be is abandoned."""
    directory = Path(settings.MEDIA_ROOT) / EXPORT_DIRECTORY
    if not directory.is_dir():
        return
    for path in directory.glob(".*"):
        if path.stat().st_mtime >= before.timestamp():
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _write(job: ExportJob, directory: Path, name: str) -> exports.FileSummary:
    if job.kind != ExportKind.SNAPSHOT:
        return _file_with_manifest(job, directory, name)
    # Written beside the final name and renamed at the end: a download never sees half a file.
    handle, partial = tempfile.mkstemp(prefix=f".{name}-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            rows = _snapshot_zip(job, directory, stream)
        summary = _summary_of(Path(partial), rows)  # the zip's own bytes
        os.replace(partial, directory / name)
        return summary
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _file_with_manifest(job: ExportJob, directory: Path, name: str) -> exports.FileSummary:
    """The file and `NAME.manifest.json` beside it, written exactly as `export_ratings`
    writes them, so that a file from the web can be checked and cited like one from the
    command. Both are staged in a hidden folder and moved into place manifest first: once
    the file can be downloaded, its manifest can too."""
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=directory))
    try:
        manifest = exports.file_write(
            staging / name,
            job.study,
            job.kind,
            include_excluded=job.include_excluded,
            bom=job.bom,
            command=f"export job {job.pk} ({job.kind}) requested from the results page",
        )
        manifest_path = exports.file_manifest_path(directory / name)
        os.replace(exports.file_manifest_path(staging / name), manifest_path)
        os.replace(staging / name, directory / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    described = manifest["files"][name]
    return exports.FileSummary(
        rows=described["rows"], bytes=described["bytes"], sha256=described["sha256"]
    )


def _snapshot_zip(job: ExportJob, directory: Path, stream) -> int:
    staging = Path(tempfile.mkdtemp(prefix=".snapshot-", dir=directory))
    try:
        folder = staging / f"{job.study.slug}-snapshot-{job.pk}"
        manifest = exports.snapshot_write(
            folder,
            job.study,
            include_excluded=job.include_excluded,
            bom=job.bom,
            command=f"export job {job.pk} (snapshot) requested from the results page",
        )
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.iterdir()):
                archive.write(path, f"{folder.name}/{path.name}")
        return manifest["files"]["ratings-long.csv"]["rows"]
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _summary_of(path: Path, rows: int) -> exports.FileSummary:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return exports.FileSummary(rows=rows, bytes=path.stat().st_size, sha256=digest.hexdigest())
