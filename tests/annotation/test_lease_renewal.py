"""A rater who comes back to the rating page after the lease ran out (a long break, the
next day): what they typed is saved if the item can still be theirs, and otherwise they
are told so above their next item, never on a page claiming nothing is left."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, AssignmentState, Item, Judgment, ProfileStatus
from tests.builders import lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db


def ran_out(lease, *, swept=False):
    """The lease as the next day finds it; `swept`: marked by the beat's housekeeping."""
    changes = {"expires_at": timezone.now() - timedelta(hours=20)}
    if swept:
        changes["state"] = AssignmentState.EXPIRED
    Assignment.objects.filter(pk=lease.pk).update(**changes)


@pytest.mark.parametrize("swept", [False, True])
def test_ratings_sent_after_the_lease_ran_out_are_saved_while_the_item_has_room(
    client, alice, swept
):
    lease = lease_pair(alice)
    ran_out(lease, swept=swept)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    judgment = Judgment.objects.get()
    assert judgment.assignment_id == lease.pk
    assert judgment.ratings.count() == len(complete_form()) - 1
    lease.refresh_from_db()
    assert lease.state == AssignmentState.SUBMITTED


def test_the_page_reopened_the_next_day_shows_the_same_item_with_its_token(client, alice):
    lease = lease_pair(alice)
    ran_out(lease, swept=True)
    client.force_login(alice)

    response = client.get(f"/annotate/{lease.token}/")

    assert response.status_code == 200
    # The same token: the page finds the draft the browser kept under it.
    assert f'data-draft-key="{lease.token}"' in response.content.decode()
    lease.refresh_from_db()
    assert lease.state == AssignmentState.ACTIVE and lease.expires_at > timezone.now()


def test_an_item_that_filled_up_meanwhile_refuses_and_serves_the_next_item(client, alice):
    lease = lease_pair(alice)
    ran_out(lease)
    item = Item.objects.get(pk=lease.item_id)
    Item.objects.filter(pk=item.pk).update(judgment_count=item.study.overlap)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    html = response.content.decode()
    assert response.status_code == 409
    assert "ran out" in html and "Nothing was saved" in html
    assert "Nothing to rate right now" not in html
    assert 'class="rating-form"' in html and lease.token not in html
    assert Judgment.objects.count() == 0
    lease.refresh_from_db()
    assert lease.state != AssignmentState.ACTIVE or lease.expires_at <= timezone.now()


def test_reopening_an_item_that_filled_up_leads_on_with_the_reason(client, alice):
    lease = lease_pair(alice)
    ran_out(lease)
    Item.objects.filter(pk=lease.item_id).update(judgment_count=lease.item.study.overlap)
    client.force_login(alice)

    response = client.get(f"/annotate/{lease.token}/", follow=True)

    html = response.content.decode()
    assert response.redirect_chain[0] == ("/annotate/", 302)
    assert "ran out" in html and "Nothing to rate right now" not in html
    assert 'class="rating-form"' in html


def test_a_skipped_or_submitted_lease_is_never_renewed(alice):
    lease = lease_pair(alice)
    services.assignment_skip(user=alice, token=lease.token, reason="not for me")
    ran_out(lease)
    lease.refresh_from_db()

    assert services.lease_renew(user=alice, assignment=lease) is False
    lease.refresh_from_db()
    assert lease.state == AssignmentState.SKIPPED


def test_a_suspended_annotators_lease_is_not_renewed(alice):
    lease = lease_pair(alice)
    ran_out(lease)
    alice.annotator_profile.status = ProfileStatus.SUSPENDED
    alice.annotator_profile.save(update_fields=["status"])
    lease.refresh_from_db()

    assert services.lease_renew(user=alice, assignment=lease) is False
    lease.refresh_from_db()
    assert lease.expires_at <= timezone.now()


def test_a_live_lease_is_left_alone(alice, bob):
    lease = lease_pair(alice)
    expires_at = lease.expires_at

    assert services.lease_renew(user=alice, assignment=lease) is False
    assert services.lease_renew(user=bob, assignment=lease) is False
    lease.refresh_from_db()
    assert lease.expires_at == expires_at
