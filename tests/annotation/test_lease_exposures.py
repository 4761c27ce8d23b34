"""A lease records the answers it shows in one statement; an annotator who has already
seen one of them (a lease taken at the same moment in another tab) gets nothing, and
nothing of the refused lease is recorded. Nor is anything recorded of a lease refused
because the item's judgments and live leases fill its overlap."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AnswerExposure, Assignment, Item, ItemKind
from annotation.selectors import item_block
from annotation.selectors.sides import SideHistory
from annotation.services import leases
from tests.builders import approved_annotator

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


def lease_held_by(annotator, item, *, minutes_left: int) -> None:
    now = timezone.now()
    Assignment.objects.create(
        item=item,
        annotator=annotator,
        display_order=[0, 1],
        served_at=now - timedelta(minutes=30),
        expires_at=now + timedelta(minutes=minutes_left),
    )


@pytest.fixture
def item_one_place_left(study, luffy):
    """An item of overlap 3 with one judgment and one live lease: one place left."""
    assert study.overlap == 3
    item = study.items.filter(kind=ItemKind.PAIR).first()
    Item.objects.filter(pk=item.pk).update(judgment_count=1)
    lease_held_by(approved_annotator("holder@example.com", [luffy]), item, minutes_left=10)
    return item


def test_the_last_place_on_an_item_is_leased_once(study, alice, bob, item_one_place_left):
    now = timezone.now()
    assert leases._lease(alice, item_one_place_left.pk, study, now, gold=False, sides=SideHistory())

    refused = leases._lease(
        bob, item_one_place_left.pk, study, now, gold=False, sides=SideHistory()
    )

    assert refused is None
    assert not AnswerExposure.objects.filter(annotator=bob).exists()
    assert not Assignment.objects.filter(annotator=bob).exists()


def test_an_expired_lease_leaves_its_place(study, alice, bob, luffy, item_one_place_left):
    lease_held_by(
        approved_annotator("late@example.com", [luffy]), item_one_place_left, minutes_left=-1
    )
    now = timezone.now()
    assert leases._lease(alice, item_one_place_left.pk, study, now, gold=False, sides=SideHistory())
    assert (
        leases._lease(bob, item_one_place_left.pk, study, now, gold=False, sides=SideHistory())
        is None
    )


def test_a_gold_item_is_served_beyond_its_overlap(study, alice, bob, item_one_place_left):
    now = timezone.now()
    assert leases._lease(alice, item_one_place_left.pk, study, now, gold=False, sides=SideHistory())

    gold = leases._lease(bob, item_one_place_left.pk, study, now, gold=True, sides=SideHistory())

    assert gold is not None and Assignment.objects.filter(annotator=bob).exists()
