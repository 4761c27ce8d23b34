"""When a study's results are recomputed: by a worker, shortly after each judgment or
decision that changes them (a burst costs one recompute), when staff ask, and from the
beat schedule, which also catches up on refreshes the broker could not take."""

from django.conf import settings
from django.core.cache import cache

from .. import enqueue
from ..models import Study, StudyStatus

RESULTS_REFRESH_TASK = "annotation.tasks.study_results_refresh"
# Submissions within this many seconds of each other share one results refresh, or
# within CHATANIME_RESULTS_REFRESH_SPACING times the last recompute's duration, if
# longer. A recompute reads every judgment of the study, so it grows with the study;
# refreshes spaced by only two seconds would keep a worker busy without pause on a large
# study, taking a core from the annotators on a small machine. Spaced by twice their own
# duration (the default), they take at most about half of a worker's time, and results
# lag by about three recomputes at most.
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
        debounce_seconds=max(
            RESULTS_REFRESH_DEBOUNCE_SECONDS, settings.CHATANIME_RESULTS_REFRESH_SPACING * last
        ),
    )


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
