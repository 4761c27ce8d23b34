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
