"""The progress line of the rating page, read by written statements (`annotation.sql`) on
whichever database the tests run: judgments in open studies, today's judgments, live
leases among what is left, and the break rule of the study last rated."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Judgment, StudyStatus
from tests.factories import lease_pair
from tests.helpers import full_ratings

pytestmark = pytest.mark.django_db


def rate(user, n: int) -> list[Judgment]:
    judgments = []
    for _ in range(n):
        lease = lease_pair(user)
        judgments.append(
            services.judgment_submit(
                user=user,
                token=lease.token,
                submission=services.Submission(ratings=full_ratings(), preference="tie"),
            )
        )
    return judgments


def test_the_figures_count_open_studies_today_and_live_leases(alice, study):
    yesterday, *_today = rate(alice, 3)
    Judgment.objects.filter(pk=yesterday.pk).update(
        submitted_at=timezone.now() - timedelta(days=1, hours=1)
    )

    progress = selectors.progress_of(alice)
    assert (progress.done, progress.today, progress.break_due) == (3, 2, False)

    lease_pair(alice)  # a live lease is part of what is left
    assert selectors.progress_of(alice).remaining == progress.remaining + 1

    study.status = StudyStatus.CLOSED
    study.save()
    assert selectors.progress_of(alice).done == 0


def test_a_break_is_due_by_the_rule_of_the_study_last_rated(alice, study):
    study.break_every_items = 2
    study.save()
    rate(alice, 1)
    assert not selectors.progress_of(alice).break_due

    rate(alice, 1)
    assert selectors.progress_of(alice).break_due


def test_a_long_sitting_is_read_from_the_stored_moments(alice, study, monkeypatch):
    # At midday: run just after midnight, the sitting's first judgments would be
    # yesterday's, which the break rule rightly leaves out.
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: now)
    first, second = rate(alice, 2)
    # Rated 50 and 5 minutes ago: two sittings, the last one short.
    Judgment.objects.filter(pk=first.pk).update(submitted_at=now - timedelta(minutes=50))
    Judgment.objects.filter(pk=second.pk).update(submitted_at=now - timedelta(minutes=5))
    assert not selectors.progress_of(alice).break_due

    # Rated 50, 41, 32, 23, 14 and 5 minutes ago: one sitting of 45 minutes and more.
    more = rate(alice, 4)
    for n, judgment in enumerate([first, *more, second]):
        Judgment.objects.filter(pk=judgment.pk).update(
            submitted_at=now - timedelta(minutes=50 - 9 * n)
        )
    assert selectors.progress_of(alice).break_due
