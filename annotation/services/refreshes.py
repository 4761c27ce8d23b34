"""When a study's results are recomputed: by a worker, shortly after each judgment or
decision that changes them (a burst costs one recompute), when staff ask, and from the
beat schedule, which also catches up on refreshes the broker could not take."""

import os

from django.conf import settings
from django.core.cache import cache

from common import enqueue

from ..models import Study, StudyStatus

RESULTS_REFRESH_TASK = "annotation.tasks.study_results_refresh"
# Submissions within this many seconds of each other share one results refresh, or
# within `refresh_spacing()` times the last recompute's duration, if longer. A recompute
# reads every judgment of the study, so it grows with the study; refreshes spaced by only
# two seconds would keep a worker busy without pause on a large study, taking a core from
# the annotators on a small machine. Spaced by twice their own duration (the default),
# they take at most about a third of a worker's time, and results lag by about three
# recomputes at most.
RESULTS_REFRESH_DEBOUNCE_SECONDS = 2


def study_results_refresh_later(*, study_id: int) -> None:
    """Once the current transaction commits, debounced. A dead broker delays results and
    loses nothing: `open_studies_refresh` catches up."""
    # Asked here, before the delay is read from the cache, and not only by `enqueue.send`:
    # a refresh known to be queued will count this judgment too, and asking costs no
    # round trip to Redis. The refresh's mark is read with the delay, in the same round
    # trip: when another process queued it, this one knows from then on too.
    if enqueue.queued_here(RESULTS_REFRESH_TASK, study_id):
        return
    mark_key = enqueue.debounce_key(RESULTS_REFRESH_TASK, study_id)
    found = cache.get_many([recompute_seconds_key(study_id), mark_key])
    if enqueue.queued_elsewhere(RESULTS_REFRESH_TASK, study_id, mark=found.get(mark_key)):
        return
    last = found.get(recompute_seconds_key(study_id)) or 0
    enqueue.on_commit(
        RESULTS_REFRESH_TASK,
        study_id,
        debounce_seconds=max(RESULTS_REFRESH_DEBOUNCE_SECONDS, refresh_spacing() * last),
    )


def refresh_spacing() -> float:
    """How many times its last recompute's duration a study's next refresh waits:
    CHATANIME_RESULTS_REFRESH_SPACING while this machine has room, and
    CHATANIME_RESULTS_REFRESH_SPACING_BUSY while it is saturated, its load over the last
    minute at least its number of cores. A crowd rating at a human pace leaves the machine
    mostly idle, and fresh results cost it nothing; when annotators saturate the cores, a
    recompute every few seconds would take them from the annotators (a sixth of the
    judgments per second at 50 annotators in a closed loop on two cores, measured with
    bench/load.py), so results come later instead. A machine that cannot tell its load counts
    as having room."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return settings.CHATANIME_RESULTS_REFRESH_SPACING
    cores = getattr(os, "process_cpu_count", os.cpu_count)() or 1
    if load >= cores:
        return settings.CHATANIME_RESULTS_REFRESH_SPACING_BUSY
    return settings.CHATANIME_RESULTS_REFRESH_SPACING


def recompute_seconds_key(study_id: int) -> str:
    """Where the duration of the study's last recompute is kept (`study_recompute`)."""
    return f"results-recompute-seconds:{study_id}"


def study_results_refresh_request(*, study: Study) -> bool:
    """A recompute now, as staff ask; False when the task queue cannot be reached."""
    return enqueue.send(RESULTS_REFRESH_TASK, study.pk)


def open_studies_refresh() -> int:
    """Ask for a recompute of every open study; returns how many were asked for."""
    ids = list(Study.objects.filter(status=StudyStatus.OPEN).values_list("pk", flat=True))
    for study_id in ids:
        enqueue.send(RESULTS_REFRESH_TASK, study_id)
    return len(ids)
