"""Celery time limits on a real worker with the prefork pool, the one production runs (the
solo and threads pools enforce no time limit at all): a task that hangs is interrupted at
its soft limit, what it was doing is recorded as failed or left unstored, and the worker
carries on with the next task. The hanging task is a real task of the product paused
half-way by tests.fixtures.pausing_worker.

Celery writes the sender's limits into each message, and the worker applies those before
its own: the process that enqueues (here the test, in production the web and beat
processes, which share the workers' environment) decides them."""

import contextlib
import os
import time

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from annotation import exports, services
from annotation.models import ExportJob, ExportStatus, Judgment, StudyResults
from annotation.simulation import simulate_study
from annotation.tasks import study_results_refresh
from tests.builders import UserFactory, make_study
from tests.fixtures.services import (
    REPO,
    database_url_of_test_database,
    publishing_to,
    running_worker,
    wait_for,
)

SOFT_LIMIT = 6  # seconds: well above what the small study's tasks take on a busy machine


@pytest.fixture
def sent_with_limits(monkeypatch):
    """Have this process send `task_name` with these limits, as if it had been started
    with them configured (CELERY_TASK_SOFT_TIME_LIMIT and its hard limit)."""
    from chatanime_site.celery import app

    def configure(task_name, *, soft, hard):
        task = app.tasks[task_name]
        monkeypatch.setattr(task, "soft_time_limit", soft)
        monkeypatch.setattr(task, "time_limit", hard)
        monkeypatch.setattr(task, "_exec_options", None)  # Celery caches them

    return configure


@pytest.fixture
def media_root(tmp_path, settings):
    root = tmp_path / "media"
    settings.MEDIA_ROOT = root
    return root


@pytest.fixture
def small_study(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    study = make_study(characters=[luffy], rounds=(1,), overlap=2)
    simulate_study(study=study, annotators=4, seed=5)
    StudyResults.objects.all().delete()  # simulate_study computed them in-process
    return study


@contextlib.contextmanager
def pausing_prefork_worker(*, redis_url, tmp_path, pause_in, env):
    """A prefork worker (one child process) whose first task pauses half-way; yields
    (worker, marker, log) where `log()` is what the worker has logged so far."""
    marker = tmp_path / f"{pause_in}-paused"
    log_path = tmp_path / "worker.log"
    queue = f"time-limits-{os.getpid()}-{time.monotonic_ns()}"
    with (
        open(log_path, "w") as log,
        publishing_to(redis_url, queue),
        running_worker(
            database_url=database_url_of_test_database(),
            redis_url=redis_url,
            queues=[queue],
            app="tests.fixtures.pausing_worker",
            pool="prefork",
            concurrency=1,
            log=log,
            env={
                "CHATANIME_PAUSE_MARKER": str(marker),
                "CHATANIME_PAUSE_IN": pause_in,
                "CHATANIME_BOOTSTRAP_DRAWS": "20",
                **env,
            },
        ) as worker,
    ):
        yield worker, marker, log_path.read_text


def paused_in_a_child_of(worker, marker) -> None:
    assert wait_for(marker.exists, timeout=60), "the task never reached its pause"
    # The task runs in a child process of the worker, not in the worker itself.
    assert marker.read_text() != str(worker.pid)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_recompute_stopped_at_the_soft_limit_stores_nothing_and_the_worker_carries_on(
    postgres, redis_url, small_study, tmp_path, sent_with_limits
):
    study = small_study
    sent_with_limits(
        "annotation.tasks.study_results_refresh", soft=SOFT_LIMIT, hard=SOFT_LIMIT + 60
    )
    with pausing_prefork_worker(
        redis_url=redis_url,
        tmp_path=tmp_path,
        pause_in="recompute",
        env={"CELERY_TASK_SOFT_TIME_LIMIT": str(SOFT_LIMIT)},
    ) as (worker, marker, log):
        study_results_refresh.delay(study.pk)
        paused_in_a_child_of(worker, marker)

        stopped = (
            f"Soft time limit ({SOFT_LIMIT}s) exceeded for annotation.tasks.study_results_refresh"
        )
        assert wait_for(lambda: "raised unexpected: SoftTimeLimitExceeded" in log(), 90), log()
        assert stopped in log()
        # Stopped before the document was stored: the study keeps what it had (nothing).
        assert not StudyResults.objects.filter(study=study).exists()

        # The same worker takes the next recompute, which runs through.
        study_results_refresh.delay(study.pk)
        results = wait_for(lambda: StudyResults.objects.filter(study=study).first(), 90)
        assert results is not None, log()
        assert worker.poll() is None

    counted = Judgment.objects.filter(item__study=study, excluded=False, item__is_gold=False)
    assert results.judgments == counted.count() > 0


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_an_export_stopped_at_the_soft_limit_is_failed_with_the_reason_and_leaves_no_file(
    postgres, redis_url, small_study, media_root, tmp_path, sent_with_limits
):
    study = small_study
    sent_with_limits("annotation.tasks.export_job_run", soft=SOFT_LIMIT, hard=SOFT_LIMIT + 60)
    researcher = UserFactory(email="r@example.com")
    with pausing_prefork_worker(
        redis_url=redis_url,
        tmp_path=tmp_path,
        pause_in="export",
        env={"DJANGO_MEDIA_ROOT": str(media_root)},
    ) as (worker, marker, log):
        stopped = services.export_job_request(study=study, user=researcher, kind="csv")
        paused_in_a_child_of(worker, marker)

        failed = wait_for(
            lambda: ExportJob.objects.filter(pk=stopped.pk, status=ExportStatus.FAILED).first(),
            90,
        )
        assert failed is not None, log()
        assert failed.error == services.exports.TIME_LIMIT_ERROR
        assert failed.finished_at is not None and not failed.file
        assert list((media_root / "exports").iterdir()) == []  # the half file is gone
        assert f"Soft time limit ({SOFT_LIMIT}s) exceeded for annotation.tasks.export_job_run" in (
            log()
        )

        # The same worker writes the next export in full.
        following = services.export_job_request(study=study, user=researcher, kind="csv")
        done = wait_for(
            lambda: ExportJob.objects.filter(pk=following.pk, status=ExportStatus.DONE).first(),
            90,
        )
        assert done is not None, log()
        assert worker.poll() is None

    expected = b"".join(exports.export_chunks(study, "csv", False))
    assert (media_root / done.file.name).read_bytes() == expected


@pytest.mark.django_db
def test_an_export_interrupted_by_the_soft_limit_says_so_and_leaves_no_file(
    small_study, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    def interrupted(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("annotation.exports.snapshot.export_write", interrupted)
    with django_capture_on_commit_callbacks(execute=True):
        job = services.export_job_request(
            study=small_study, user=UserFactory(email="r@example.com"), kind="wide"
        )

    job.refresh_from_db()
    assert job.status == ExportStatus.FAILED
    assert job.error == services.exports.TIME_LIMIT_ERROR and job.finished_at is not None
    assert list((media_root / "exports").iterdir()) == []


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_an_export_killed_at_the_hard_limit_is_failed_and_a_new_child_takes_the_next(
    postgres, redis_url, small_study, media_root, tmp_path, sent_with_limits
):
    study = small_study
    researcher = UserFactory(email="r@example.com")
    # Short enough to wait for: the soft limit is ignored, the hard one comes 4 s later.
    sent_with_limits("annotation.tasks.export_job_run", soft=3, hard=7)
    with pausing_prefork_worker(
        redis_url=redis_url,
        tmp_path=tmp_path,
        pause_in="export",
        env={"DJANGO_MEDIA_ROOT": str(media_root), "CHATANIME_PAUSE_IGNORES_SOFT_LIMIT": "1"},
    ) as (worker, marker, log):
        killed = services.export_job_request(study=study, user=researcher, kind="csv")
        paused_in_a_child_of(worker, marker)

        failed = wait_for(
            lambda: ExportJob.objects.filter(pk=killed.pk, status=ExportStatus.FAILED).first(),
            90,
        )
        assert failed is not None, log()
        assert failed.error == services.exports.KILLED_AT_TIME_LIMIT_ERROR
        assert "Hard time limit (7s) exceeded for annotation.tasks.export_job_run" in log()

        # The child that was killed is replaced; the next export (with the usual limits)
        # is written in full.
        sent_with_limits("annotation.tasks.export_job_run", soft=600, hard=660)
        following = services.export_job_request(study=study, user=researcher, kind="csv")
        done = wait_for(
            lambda: ExportJob.objects.filter(pk=following.pk, status=ExportStatus.DONE).first(),
            90,
        )
        assert done is not None, log()
        assert worker.poll() is None

    assert ExportJob.objects.get(pk=killed.pk).status == ExportStatus.FAILED
    expected = b"".join(exports.export_chunks(study, "csv", False))
    assert (media_root / done.file.name).read_bytes() == expected


@pytest.mark.django_db
def test_only_an_unfinished_export_is_marked_killed(small_study):
    researcher = UserFactory(email="r@example.com")
    running = ExportJob.objects.create(
        study=small_study, requested_by=researcher, kind="csv", status=ExportStatus.RUNNING
    )
    done = ExportJob.objects.create(
        study=small_study, requested_by=researcher, kind="csv", status=ExportStatus.DONE
    )

    assert services.export_job_killed(job_id=running.pk) is True
    assert services.export_job_killed(job_id=done.pk) is False

    running.refresh_from_db()
    assert running.status == ExportStatus.FAILED and running.finished_at is not None
    assert running.error == services.exports.KILLED_AT_TIME_LIMIT_ERROR
    assert ExportJob.objects.get(pk=done.pk).status == ExportStatus.DONE


@pytest.mark.parametrize("path", ["docker-compose.yml", "Makefile"])
def test_every_worker_started_for_real_use_runs_the_prefork_pool(path):
    commands = [
        line
        for line in (REPO / path).read_text().splitlines()
        if "celery -A chatanime_site worker" in line
    ]
    assert commands
    for command in commands:
        assert "--pool prefork" in command, command
