"""A lease records the answers it shows in one statement; an annotator who has already
seen one of them (a lease taken at the same moment in another tab) gets nothing, and
nothing of the refused lease is recorded."""

import pytest
from django.utils import timezone

from annotation.models import AnswerExposure, Assignment, ItemKind
from annotation.selectors import item_block
from annotation.selectors.eligibility import SideHistory
from annotation.services import leases

pytestmark = pytest.mark.django_db


def test_a_lease_showing_an_answer_already_seen_is_refused_and_leaves_no_trace(study, alice):
    item = study.items.filter(kind=ItemKind.PAIR).first()
    _first, *others = item_block(item).exposed_answer_ids
    AnswerExposure.objects.create(annotator=alice, study=study, answer_id=others[-1])

    assert (
        leases._lease(alice, item.pk, study, timezone.now(), gold=False, sides=SideHistory())
        is None
    )

    assert list(
        AnswerExposure.objects.filter(annotator=alice).values_list("answer_id", flat=True)
    ) == [others[-1]]
    assert not Assignment.objects.filter(annotator=alice).exists()


def test_a_lease_records_every_answer_it_shows(study, alice):
    item = study.items.filter(kind=ItemKind.PAIR).first()

    lease = leases._lease(alice, item.pk, study, timezone.now(), gold=False, sides=SideHistory())

    assert lease is not None and lease.item == item
    assert set(
        AnswerExposure.objects.filter(annotator=alice, study=study).values_list(
            "answer_id", flat=True
        )
    ) == set(item_block(item).exposed_answer_ids)
