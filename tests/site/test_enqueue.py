"""common.enqueue: the one way every app hands work to the workers."""

from contextlib import suppress

import pytest
from celery import current_app
from django.core.cache import cache
from django.db import transaction
from kombu.exceptions import OperationalError

from annotation.services.exports import EXPORT_JOB_RUN_TASK
from annotation.services.refreshes import RESULTS_REFRESH_DEBOUNCE_SECONDS, RESULTS_REFRESH_TASK
from common import enqueue

TASK = "annotation.tasks.leases_expire"


class Rollback(Exception):
    pass


@pytest.fixture
def sent(monkeypatch):
    """What reached the broker: (args, countdown) of every send of TASK."""
    cache.clear()
    calls = []
    monkeypatch.setattr(
        current_app.tasks[TASK],
        "apply_async",
        lambda args, countdown=None: calls.append((args, countdown)),
    )
    return calls


@pytest.fixture
def broker_down(monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis. Connection refused.")

    monkeypatch.setattr(current_app.tasks[TASK], "apply_async", unreachable)


def test_the_tasks_the_services_send_by_name_exist():
    from django.conf import settings

    from collection.services import CELL_COLLECT_TASK, RUN_ENQUEUE_TASK
    from writing.services.rounds import FOLLOWUP_SIMULATE_TASK

    sent_by_services = (
        RESULTS_REFRESH_TASK,
        EXPORT_JOB_RUN_TASK,
        RUN_ENQUEUE_TASK,
        CELL_COLLECT_TASK,
        FOLLOWUP_SIMULATE_TASK,
    )
    for name in sent_by_services:
        assert name in current_app.tasks, name
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in current_app.tasks, entry["task"]


def test_a_burst_of_debounced_requests_sends_one_task_that_waits_for_the_burst(sent, settings):
    settings.CHATANIME_TASKS_IN_BACKGROUND = False

    for _ in range(5):
        assert enqueue.send(TASK, 7, debounce_seconds=RESULTS_REFRESH_DEBOUNCE_SECONDS)
    enqueue.send(TASK, 8, debounce_seconds=RESULTS_REFRESH_DEBOUNCE_SECONDS)

    assert sent == [
        ((7,), RESULTS_REFRESH_DEBOUNCE_SECONDS),
        ((8,), RESULTS_REFRESH_DEBOUNCE_SECONDS),
    ]


def test_without_a_debounce_every_request_is_sent_at_once(sent):
    enqueue.send(TASK, 7)
    enqueue.send(TASK, 7)

    assert sent == [((7,), None), ((7,), None)]


@pytest.mark.django_db
def test_a_task_is_sent_when_the_transaction_commits_not_before(
    sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        enqueue.on_commit(TASK, 7)
        assert sent == []

    assert sent == [((7,), None)]


@pytest.mark.django_db
def test_nothing_is_sent_when_the_transaction_rolls_back(sent, django_capture_on_commit_callbacks):
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        suppress(Rollback),
        transaction.atomic(),
    ):
        enqueue.on_commit(TASK, 7)
        raise Rollback

    assert sent == [] and callbacks == []


def test_an_unreachable_broker_is_logged_and_answered_with_false(broker_down, caplog):
    assert enqueue.send(TASK, 7) is False
    assert any("could not enqueue" in r.getMessage() for r in caplog.records)


@pytest.mark.django_db
def test_an_unreachable_broker_after_the_commit_tells_the_caller(
    broker_down, django_capture_on_commit_callbacks
):
    told = []

    with django_capture_on_commit_callbacks(execute=True):
        enqueue.on_commit(TASK, 7, if_unreachable=lambda: told.append(True))

    assert told == [True]


@pytest.fixture
def asked(monkeypatch) -> list:
    """The delay of each results refresh asked for, in order; none is sent."""
    delays: list = []
    monkeypatch.setattr(
        enqueue,
        "send",
        lambda name, *args, debounce_seconds=0, **options: delays.append(debounce_seconds),
    )
    return delays


@pytest.mark.django_db
def test_refreshes_of_a_study_whose_recompute_is_slow_are_spaced_by_their_duration(
    monkeypatch, django_capture_on_commit_callbacks, study, settings, asked
):
    from annotation import services
    from annotation.services import refreshes

    settings.CHATANIME_RESULTS_REFRESH_SPACING = 3.0
    machine_load(monkeypatch, 0.5, cores=2)  # with room: the test suite's own load aside
    cache.clear()
    with django_capture_on_commit_callbacks(execute=True):
        refreshes.study_results_refresh_later(study_id=study.pk)
    services.study_recompute(study=study)
    assert cache.get(refreshes.recompute_seconds_key(study.pk)) > 0  # its duration, kept
    cache.set(refreshes.recompute_seconds_key(study.pk), 4.5)  # as a large study would take
    with django_capture_on_commit_callbacks(execute=True):
        refreshes.study_results_refresh_later(study_id=study.pk)

    assert asked == [RESULTS_REFRESH_DEBOUNCE_SECONDS, 3.0 * 4.5]


def machine_load(monkeypatch, load: float | None, *, cores: int) -> None:
    """This machine's load over the last minute as `refresh_spacing` reads it (None: the
    platform cannot tell), on `cores` cores."""
    from annotation.services import refreshes

    def getloadavg():
        if load is None:
            raise OSError("no load average here")
        return (load, 0.0, 0.0)

    monkeypatch.setattr(refreshes.os, "getloadavg", getloadavg)
    monkeypatch.setattr(refreshes.os, "process_cpu_count", lambda: cores, raising=False)


@pytest.mark.django_db
def test_refreshes_of_a_large_study_wait_longer_while_the_machine_is_saturated(
    monkeypatch, django_capture_on_commit_callbacks, study, settings, asked
):
    from annotation.services import refreshes

    settings.CHATANIME_RESULTS_REFRESH_SPACING = 2.0
    settings.CHATANIME_RESULTS_REFRESH_SPACING_BUSY = 6.0
    cache.set(refreshes.recompute_seconds_key(study.pk), 4.5)  # a large study's recompute
    for load in (1.9, 2.0, 7.5, None):
        machine_load(monkeypatch, load, cores=2)
        cache.delete(enqueue.debounce_key(refreshes.RESULTS_REFRESH_TASK, study.pk))
        enqueue.queued_here_forget()
        with django_capture_on_commit_callbacks(execute=True):
            refreshes.study_results_refresh_later(study_id=study.pk)

    # Room (1.9 on 2 cores), saturated (2.0, 7.5), a platform without a load average.
    assert asked == [2.0 * 4.5, 6.0 * 4.5, 6.0 * 4.5, 2.0 * 4.5]


@pytest.mark.django_db
def test_a_small_studys_refresh_waits_the_debounce_however_busy_the_machine(
    monkeypatch, django_capture_on_commit_callbacks, study, asked
):
    from annotation.services import refreshes

    machine_load(monkeypatch, 12.0, cores=2)
    cache.set(refreshes.recompute_seconds_key(study.pk), 0.05)
    with django_capture_on_commit_callbacks(execute=True):
        refreshes.study_results_refresh_later(study_id=study.pk)

    assert asked == [RESULTS_REFRESH_DEBOUNCE_SECONDS]


class CacheAsked:
    """Counts the cache's debounce marks asked for, answering as Redis would."""

    def __init__(self, monkeypatch, *, already_queued=False):
        self.calls = 0
        self.already_queued = already_queued
        monkeypatch.setattr(cache, "add", self.add)

    def add(self, key, value, timeout=None, version=None):
        self.calls += 1
        return not self.already_queued


def test_requests_soon_after_a_task_this_process_queued_do_not_ask_the_cache(
    sent, settings, monkeypatch
):
    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    asked = CacheAsked(monkeypatch)
    clock = [1000.0]
    monkeypatch.setattr(enqueue.time, "monotonic", lambda: clock[0])

    assert enqueue.send(TASK, 7, debounce_seconds=2)
    clock[0] += 0.9  # within half the delay: the queued task starts after this request
    assert enqueue.send(TASK, 7, debounce_seconds=2)
    assert enqueue.queued_here(TASK, 7) and not enqueue.queued_here(TASK, 8)
    assert (asked.calls, len(sent)) == (1, 1)

    clock[0] += 0.2  # past half the delay: the cache decides again
    assert not enqueue.queued_here(TASK, 7)
    enqueue.send(TASK, 7, debounce_seconds=2)
    assert (asked.calls, len(sent)) == (2, 2)


def test_a_task_another_process_queued_is_asked_about_every_time(sent, settings, monkeypatch):
    """`send` alone does not read when the other's task starts, so it cannot skip the
    cache on its account (`study_results_refresh_later` reads the mark first)."""
    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    asked = CacheAsked(monkeypatch, already_queued=True)

    for _ in range(3):
        assert enqueue.send(TASK, 7, debounce_seconds=2)

    assert (asked.calls, sent, enqueue.queued_here(TASK, 7)) == (3, [], False)


def test_a_task_the_broker_refused_is_not_remembered_as_queued(broker_down, settings):
    settings.CHATANIME_TASKS_IN_BACKGROUND = False

    assert enqueue.send(TASK, 7, debounce_seconds=2) is False
    assert not enqueue.queued_here(TASK, 7)


@pytest.mark.django_db
def test_a_results_refresh_already_queued_here_reads_nothing_from_the_cache(
    monkeypatch, settings, django_capture_on_commit_callbacks, study
):
    from annotation.services import refreshes

    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    sends = []
    monkeypatch.setattr(
        current_app.tasks[RESULTS_REFRESH_TASK],
        "apply_async",
        lambda args, countdown=None: sends.append(args),
    )
    with django_capture_on_commit_callbacks(execute=True):
        refreshes.study_results_refresh_later(study_id=study.pk)
    reads = []
    monkeypatch.setattr(cache, "get", lambda *args, **kwargs: reads.append(args))
    monkeypatch.setattr(cache, "add", lambda *args, **kwargs: reads.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        refreshes.study_results_refresh_later(study_id=study.pk)

    assert (sends, reads) == ([(study.pk,)], [])


def test_a_mark_says_when_its_task_was_queued_and_when_it_starts(sent, settings, monkeypatch):
    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    monkeypatch.setattr(enqueue.time, "time", lambda: 5000.0)

    enqueue.send(TASK, 7, debounce_seconds=3)

    assert cache.get(enqueue.debounce_key(TASK, 7)) == (5000.0, 3)


def test_a_task_another_process_queued_is_known_from_its_mark_until_half_its_delay(monkeypatch):
    wall, clock = [1000.0], [50.0]
    monkeypatch.setattr(enqueue.time, "time", lambda: wall[0])
    monkeypatch.setattr(enqueue.time, "monotonic", lambda: clock[0])
    mark = (999.5, 2)  # queued half a second ago, starts in 1.5 s

    assert enqueue.queued_elsewhere(TASK, 7, mark=mark)
    clock[0] += 0.4  # before its half-delay (0.5 s from now): still known
    assert enqueue.queued_here(TASK, 7) and not enqueue.queued_here(TASK, 8)
    clock[0] += 0.2  # past it: the cache decides again
    assert not enqueue.queued_here(TASK, 7)


@pytest.mark.parametrize(
    "mark",
    [None, 1, (998.9, 2)],  # none; one written before marks said when; past half its delay
    ids=["none", "undated", "late"],
)
def test_a_mark_that_does_not_promise_a_start_after_this_request_is_not_trusted(monkeypatch, mark):
    monkeypatch.setattr(enqueue.time, "time", lambda: 1000.0)

    assert not enqueue.queued_elsewhere(TASK, 7, mark=mark)
    assert not enqueue.queued_here(TASK, 7)


@pytest.mark.django_db
def test_a_results_refresh_another_process_queued_is_read_once_then_known(
    monkeypatch, settings, django_capture_on_commit_callbacks, study
):
    """The servers' other processes learn of the queued refresh from its mark, read with
    the recompute's duration in one round trip, and stop asking."""
    from annotation.services import refreshes

    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    cache.clear()
    # Another process queued the refresh a moment ago.
    cache.add(
        enqueue.debounce_key(RESULTS_REFRESH_TASK, study.pk),
        enqueue._mark(RESULTS_REFRESH_DEBOUNCE_SECONDS),
        timeout=RESULTS_REFRESH_DEBOUNCE_SECONDS,
    )
    sends, reads = [], []
    monkeypatch.setattr(
        current_app.tasks[RESULTS_REFRESH_TASK],
        "apply_async",
        lambda args, countdown=None: sends.append(args),
    )
    get_many = cache.get_many
    monkeypatch.setattr(cache, "get_many", lambda keys: reads.append(keys) or get_many(keys))
    monkeypatch.setattr(cache, "add", lambda *args, **kwargs: reads.append(args))

    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            refreshes.study_results_refresh_later(study_id=study.pk)

    assert sends == [] and len(reads) == 1


def test_long_work_without_a_broker_runs_on_a_thread_of_its_own(settings, monkeypatch):
    """A collection or judge run, a follow-up or an export file: minutes of work that
    the request asking for it must not wait for when tasks run in-process."""
    import threading

    from common import background

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CHATANIME_TASKS_IN_BACKGROUND = True
    monkeypatch.setattr(background, "_long_work", {})
    ran_on = []
    monkeypatch.setattr(
        current_app.tasks[TASK], "run", lambda *args: ran_on.append(threading.current_thread())
    )

    assert enqueue.send(TASK, long_running=True)
    background.long_work_wait_idle()
    assert len(ran_on) == 1 and ran_on[0] is not threading.current_thread()

    settings.CHATANIME_TASKS_IN_BACKGROUND = False
    assert enqueue.send(TASK, long_running=True)
    assert ran_on[1:] == [threading.current_thread()]


def test_long_work_with_a_broker_is_sent_to_it(sent, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CHATANIME_TASKS_IN_BACKGROUND = True

    assert enqueue.send(TASK, 7, long_running=True)

    assert sent == [((7,), None)]


def test_one_kind_of_long_work_never_waits_behind_another(settings, monkeypatch):
    """A writer's follow-up or an export file does not wait for a judge run to end."""
    import threading

    from common import background

    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CHATANIME_TASKS_IN_BACKGROUND = True
    monkeypatch.setattr(background, "_long_work", {})
    release, ran, finished = threading.Event(), [], []

    def judge_run(*args):
        release.wait(timeout=5)
        finished.append(True)

    monkeypatch.setattr(current_app.tasks[TASK], "run", judge_run)
    monkeypatch.setattr(
        current_app.tasks[EXPORT_JOB_RUN_TASK], "run", lambda *args: ran.append(args)
    )

    enqueue.send(TASK, long_running=True)
    enqueue.send(EXPORT_JOB_RUN_TASK, 5, long_running=True)
    background.long_work(EXPORT_JOB_RUN_TASK).wait_idle()

    assert ran == [(5,)] and not finished
    release.set()
    background.long_work_wait_idle()
