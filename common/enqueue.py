"""The one way every app hands work to the Celery workers.

Services call `on_commit` (or `send`, outside a transaction); tasks call services; views
call services. Tasks are named by their Celery name ("annotation.tasks.export_job_run")
rather than imported, so that services, which the tasks call, need not import the tasks
back: the import graph goes views -> services -> enqueue, and tasks -> services, with no
cycle held together by imports inside functions. `tests/site/test_enqueue.py` checks that
every name used exists.

What happens when the broker cannot be reached: `send` logs "could not enqueue ..." and
returns False, and `on_commit` calls `if_unreachable` with the error. Whatever was being
saved stays saved; each app's beat schedule catches up with what was not sent (results
refreshes and exports in annotation, stalled runs in collection, waiting follow-ups in
writing).
"""

import logging
import time
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from .kept import Kept

logger = logging.getLogger(__name__)

# The debounced tasks known to be queued, each kept as long as a new request for the same
# task is known to be absorbed by it: until half its delay has passed, so
# that it still starts after anything committed before the request, even on a worker
# whose clock runs a little ahead. Asking the cache within that time would only confirm
# it: a results refresh is asked for on every judgment, and this saves that judgment two
# round trips to Redis (`services.refreshes`). Known from queueing the task here, or from
# its mark in the cache, which says when it was queued (`queued_elsewhere`): the
# processes of a server that did not queue it then stop asking too.
_known_queued: Kept[bool] = Kept(0, most=10_000)


def debounce_key(task_name: str, *args) -> str:
    """The cache key that marks a debounced task as queued; its value says when
    (`_mark`)."""
    return f"enqueued:{task_name}:{':'.join(map(str, args))}"


def queued_here(task_name: str, *args) -> bool:
    """True while a debounced task known to be queued will see what is committed now."""
    return _known_queued.get(debounce_key(task_name, *args)) is not None


def queued_elsewhere(task_name: str, *args, mark) -> bool:
    """Whether `mark`, the task's debounce mark as read from the cache (None if there is
    none), says that a task queued by another process will see what is committed now;
    if so, it is remembered like a task queued here, for the same time."""
    if not (isinstance(mark, tuple) and len(mark) == 2):
        return False  # no mark, or one written before marks said when
    queued_at, delay = mark
    left = queued_at + delay / 2 - time.time()
    if left <= 0:
        return False
    _known_queued.keep(debounce_key(task_name, *args), True, seconds=left)
    return True


def queued_here_forget() -> None:
    """Forget the tasks known to be queued (tests that empty the cache)."""
    _known_queued.forget()


def _mark(debounce_seconds: float) -> tuple[float, float]:
    """A debounce mark's value: when the task was queued (the machine's clock, which
    other processes and machines share within a little) and after how many seconds it
    starts."""
    return (time.time(), debounce_seconds)


def send(
    task_name: str,
    *args,
    debounce_seconds: float = 0,
    queue: str | None = None,
    long_running: bool = False,
) -> bool:
    """Send the task now; True when it is queued (or already queued), False when the
    broker cannot be reached.

    With `debounce_seconds`, the task runs that long after the first request of a burst,
    and the requests that follow within that time are absorbed by the one already
    queued (a cache key marks it: a cache that is down answers "not queued", so the
    worst case is a refresh too many, never one too few)."""
    in_process = settings.CELERY_TASK_ALWAYS_EAGER
    if debounce_seconds and in_process and settings.CHATANIME_TASKS_IN_BACKGROUND:
        # No broker: an eager task would run inside the request that asked for it (a
        # whole-study recompute inside an annotator's submission), so a thread runs it.
        from .background import refresher

        refresher(delay_seconds=debounce_seconds).request(task_name, *args)
        return True
    if long_running and in_process and settings.CHATANIME_TASKS_IN_BACKGROUND:
        from .background import long_work

        long_work(task_name).request(task_name, *args)
        return True
    if debounce_seconds:
        if queued_here(task_name, *args):
            return True
        key = debounce_key(task_name, *args)
        if not cache.add(key, _mark(debounce_seconds), timeout=debounce_seconds):
            return True
    try:
        # Registered by each app's AppConfig.ready; looking the task up (rather than
        # `send_task`) keeps CELERY_TASK_ALWAYS_EAGER working when there is no broker.
        task = current_app.tasks[task_name]
        options = {"queue": queue} if queue else {}
        task.apply_async(args, countdown=debounce_seconds or None, **options)
    except Exception:  # the broker is down; the caller decides how the work catches up
        logger.warning("could not enqueue %s%r", task_name, args, exc_info=True)
        return False
    if debounce_seconds:
        _known_queued.keep(debounce_key(task_name, *args), True, seconds=debounce_seconds / 2)
    return True


def on_commit(
    task_name: str,
    *args,
    debounce_seconds: float = 0,
    if_unreachable: Callable[[], object] | None = None,
    long_running: bool = False,
) -> None:
    """Send the task once the current transaction commits (at once outside one): a worker
    never looks for a row that is not committed yet, and nothing is sent on rollback."""

    def enqueue():
        sent = send(task_name, *args, debounce_seconds=debounce_seconds, long_running=long_running)
        if not sent and if_unreachable:
            if_unreachable()

    transaction.on_commit(enqueue, robust=True)
