"""Many annotators at once on PostgreSQL: the overlap holds, nothing is judged twice,
no lease leaks, no answer is shown twice to one annotator."""

import threading
from collections import Counter

import pytest
from django.db import connection

from annotation import services
from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import (
    AnswerExposure,
    Assignment,
    Item,
    ItemExposure,
    ItemKind,
    Judgment,
    Study,
)
from dialogues.models import Character
from tests.builders import approved_annotator, make_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

THREADS = 24


def annotate_until_done(user, start: threading.Barrier, errors: list):
    try:
        start.wait()
        while (lease := services.assignment_next(user=user)) is not None:
            if lease.item.kind == ItemKind.PAIR:
                ratings = {(p, slug): 3 for p in "ab" for slug in PAIR_METRIC_SLUGS}
                submission = services.Submission(ratings=ratings, preference="tie")
            else:
                submission = services.Submission(ratings={("set", "diversity"): 3})
            services.judgment_submit(user=user, token=lease.token, submission=submission)
    except Exception as error:  # collected and reported by the test
        errors.append(repr(error))
    finally:
        connection.close()


def test_two_dozen_annotators_at_once_respect_every_rule(postgres, demo_dataset):
    study = make_study(overlap=2, rounds=(1,), include_diversity=True)
    Study.objects.update(gold_rate=0)
    characters = list(Character.objects.all())
    annotators = [approved_annotator(f"crowd{i}@example.com", characters) for i in range(THREADS)]
    start, errors = threading.Barrier(THREADS), []

    threads = [
        threading.Thread(target=annotate_until_done, args=(a, start, errors)) for a in annotators
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)

    assert errors == []
    per_item = Counter(Judgment.objects.values_list("item_id", flat=True))
    assert max(per_item.values()) <= 2
    for item in Item.objects.filter(study=study):
        assert item.judgment_count == per_item.get(item.pk, 0)
    assert not Assignment.objects.filter(state="active").exists(), "a lease leaked"
    pairs = Judgment.objects.values_list("item_id", "annotator_id")
    assert len(pairs) == len(set(pairs))
    for annotator in annotators:
        shown = list(
            ItemExposure.objects.filter(item__judgments__annotator=annotator).values_list(
                "answer_id", flat=True
            )
        )
        assert len(shown) == len(set(shown))
        assert AnswerExposure.objects.filter(annotator=annotator).count() == len(shown)
    # 24 annotators are enough to finish every pair of this small study.
    pair_items = Item.objects.filter(study=study, kind=ItemKind.PAIR)
    assert all(per_item.get(item.pk, 0) == 2 for item in pair_items)


def test_a_keep_waiting_on_the_item_while_its_time_runs_out_is_refused(postgres, demo_dataset):
    """A keep begun just before the lease's end, while another annotator's lease of the
    item holds the item's row (and counts this lease dead once its time is over), waits
    for it and is refused: it must not hold the place the other lease was given."""
    import time
    from datetime import timedelta

    from django.db import transaction
    from django.utils import timezone

    from annotation.models import AssignmentState
    from tests.builders import lease_pair

    make_study(overlap=1, rounds=(1,))
    holder = approved_annotator("holder@example.com", list(Character.objects.all()))
    lease = lease_pair(holder)
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() + timedelta(seconds=3))
    item_locked, outcome = threading.Event(), []

    def another_lease_of_the_item():
        try:
            with transaction.atomic():
                list(Item.objects.select_for_update().filter(pk=lease.item_id))
                item_locked.set()
                time.sleep(5)  # the lease's time runs out while the row is held
        finally:
            connection.close()

    def keep():
        try:
            item_locked.wait(timeout=10)
            services.lease_keep(user=holder, token=lease.token)
            outcome.append("kept")
        except services.AnnotationError as refusal:
            outcome.append(refusal.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=another_lease_of_the_item), threading.Thread(target=keep)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert outcome == ["lease_expired"]
    lease.refresh_from_db()
    assert lease.state == AssignmentState.ACTIVE and lease.expires_at <= timezone.now()
