"""Every task of the beat schedule runs: the schedule names tasks by their dotted path,
which nothing else checks, and a task whose body names a service that does not exist
fails only when the beat first sends it, in a worker's log."""

from datetime import timedelta

import pytest
from celery import current_app
from django.conf import settings
from django.utils import timezone

from annotation import services
from annotation.models import AssignmentState
from tests.builders import approved_annotator, make_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("entry", sorted(settings.CELERY_BEAT_SCHEDULE))
def test_every_scheduled_task_runs_on_an_empty_site(entry):
    task = current_app.tasks[settings.CELERY_BEAT_SCHEDULE[entry]["task"]]
    task.run()  # raises if its body cannot run


def test_the_lease_sweep_marks_a_lease_past_its_time_expired(demo_dataset, luffy):
    make_study(overlap=1, rounds=(1,))
    annotator = approved_annotator("sweep@example.com", [luffy])
    lease = services.assignment_next(user=annotator)
    lease.expires_at = timezone.now() - timedelta(seconds=1)
    lease.save(update_fields=["expires_at"])
    assert current_app.tasks["annotation.tasks.leases_expire"].run() == 1
    lease.refresh_from_db()
    assert lease.state == AssignmentState.EXPIRED
