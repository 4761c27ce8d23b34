"""Tasks of the embedded default (no broker, tasks in-process) that must not run inside
the request that asks for them (see common.enqueue).

Without Redis, Celery runs a task inside the call that enqueues it. Each submission would
then wait for a whole-study recompute (seconds on a real study) and hold the SQLite write
lock meanwhile; the studies to refresh are collected here instead, and one thread per
process recomputes them a moment later: a burst of submissions costs one recompute, and
no annotator waits for it. Long work (a collection or judge run's model calls, a writer's
simulated follow-up, an export file) goes to threads of its own, one per kind of task, so
that the staff member who started a run of a thousand calls gets the page back at once and
watches its progress there, as with a worker. Work queued or under way when the process
stops is not resumed by itself (there is no beat without a broker): a run stays "running"
until it is paused and resumed from its page. With a broker this module is not used.
"""

import logging
import threading
import time

from celery import current_app
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)


class Refresher:
    """`delay_seconds` after the first request of a burst, and no sooner than
    `interval_seconds` after the previous recompute: on one machine a recompute competes
    with the annotators' requests for the same cores."""

    def __init__(
        self, *, delay_seconds: float, interval_seconds: float = 0, name: str = "results-refresh"
    ):
        self.name = name
        self.delay_seconds = delay_seconds
        self.interval_seconds = interval_seconds
        self._last_run = float("-inf")
        self._pending: set[tuple] = set()
        self._lock = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False

    def request(self, task_name: str, *args) -> None:
        with self._lock:
            self._pending.add((task_name, *args))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._lock.notify()

    def wait_idle(self) -> None:
        """Block until every requested refresh has run (for tests and shutdown)."""
        with self._lock:
            while self._pending or self._busy:
                self._lock.wait()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    self._lock.wait()
                # Let a burst of submissions gather, so that it costs one recompute.
                deadline = max(
                    time.monotonic() + self.delay_seconds, self._last_run + self.interval_seconds
                )
                while (left := deadline - time.monotonic()) > 0:
                    self._lock.wait(left)
                requests, self._pending = sorted(self._pending), set()
                self._busy = True
            try:
                for task_name, *args in requests:
                    close_old_connections()
                    try:
                        current_app.tasks[task_name].run(*args)
                    except Exception:
                        # Results stay stale until the next refresh, a run stays
                        # resumable from its page; what was saved stays saved.
                        logger.exception("in-process %s%r", task_name, tuple(args))
            finally:
                connections.close_all()
                self._last_run = time.monotonic()
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()


_refresher: Refresher | None = None
_refresher_lock = threading.Lock()


def refresher(*, delay_seconds: float) -> Refresher:
    """The process's one Refresher; the first request sets its delay."""
    global _refresher
    with _refresher_lock:
        if _refresher is None:
            from django.conf import settings

            _refresher = Refresher(
                delay_seconds=delay_seconds,
                interval_seconds=settings.CHATANIME_IN_PROCESS_REFRESH_INTERVAL,
            )
        return _refresher


# One thread per kind of long work: a writer's simulated follow-up or an export file never
# waits behind a collection or judge run of a thousand model calls.
_long_work: dict[str, Refresher] = {}


def long_work(task_name: str) -> Refresher:
    """The process's thread for this kind of long work: no delay, one task after another
    (a task asked for again while it waits runs once; every such task is idempotent)."""
    with _refresher_lock:
        if task_name not in _long_work:
            _long_work[task_name] = Refresher(delay_seconds=0, name=f"long-work {task_name}")
        return _long_work[task_name]


def long_work_wait_idle() -> None:
    """Block until every kind of long work asked for has run (for tests and shutdown)."""
    with _refresher_lock:
        lanes = list(_long_work.values())
    for lane in lanes:
        lane.wait_idle()
