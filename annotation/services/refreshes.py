"""When a study's results are recomputed: by a worker, shortly after each judgment or
decision that changes them (a burst costs one recompute), when staff ask, and from the
beat schedule, which also catches up on refreshes the broker could not take."""

from .. import enqueue
from ..models import Study, StudyStatus

RESULTS_REFRESH_TASK = "annotation.tasks.study_results_refresh"
# Submissions within this many seconds of each other share one results refresh.
RESULTS_REFRESH_DEBOUNCE_SECONDS = 2


def study_results_refresh_later(*, study_id: int) -> None:
    """Once the current transaction commits, debounced. A dead broker delays results and
    loses nothing: `open_studies_refresh` catches up."""
    enqueue.on_commit(
        RESULTS_REFRESH_TASK, study_id, debounce_seconds=RESULTS_REFRESH_DEBOUNCE_SECONDS
    )


def study_results_refresh_request(*, study: Study) -> bool:
    """A recompute now, as staff ask; False when the task queue cannot be reached."""
    return enqueue.send(RESULTS_REFRESH_TASK, study.pk)


def open_studies_refresh() -> int:
    """Ask for a recompute of every open study; returns how many were asked for."""
    ids = list(Study.objects.filter(status=StudyStatus.OPEN).values_list("pk", flat=True))
    for study_id in ids:
        enqueue.send(RESULTS_REFRESH_TASK, study_id)
    return len(ids)
