"""The lease a rating page or a submission reads (`selectors.own_lease`): one written
statement, converted as the ORM converts it, with what staff may change read fresh."""

import pytest
from django.forms.models import model_to_dict

from annotation import selectors
from annotation.models import Assignment, Item, Study, StudyStatus
from tests.builders import lease_pair

pytestmark = pytest.mark.django_db


def test_the_lease_reads_as_the_orm_reads_it(alice):
    lease = lease_pair(alice)
    expected = Assignment.objects.select_related(
        "item__study", "item__character", "item__scenario"
    ).get(pk=lease.pk)

    found = selectors.own_lease(alice, lease.token)

    assert model_to_dict(found) == model_to_dict(expected)
    assert (found.served_at, found.expires_at) == (expected.served_at, expected.expires_at)
    assert found.display_order == expected.display_order and isinstance(found.display_order, list)
    assert model_to_dict(found.item) == model_to_dict(expected.item)
    assert model_to_dict(found.item.study) == model_to_dict(expected.item.study)
    assert found.item.study.created_at == expected.item.study.created_at
    assert found.item.character.name_zh == expected.item.character.name_zh
    assert found.item.scenario.question == expected.item.scenario.question


def test_what_staff_change_is_read_fresh_not_from_the_process_copy(alice):
    lease = lease_pair(alice)
    selectors.own_lease(alice, lease.token)  # the item is now kept by this process
    Item.objects.filter(pk=lease.item_id).update(is_gold=True, judgment_count=2)
    Study.objects.update(status=StudyStatus.CLOSED, ask_human_guess=True)

    found = selectors.own_lease(alice, lease.token)

    assert found.item.is_gold is True and found.item.judgment_count == 2
    assert found.item.study.status == StudyStatus.CLOSED
    assert found.item.study.ask_human_guess is True


def test_another_annotators_token_reads_as_no_lease(alice, bob):
    lease = lease_pair(alice)

    assert selectors.own_lease(bob, lease.token) is None
    assert selectors.own_lease(alice, "no-such-token") is None
