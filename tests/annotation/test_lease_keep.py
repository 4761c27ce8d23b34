"""Keeping an item reserved for longer: the rating page counts the reservation down and,
near its end, offers to keep the item; a lease that ran out, another annotator's, or one
kept as long as it can be is refused and left as it was."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, AssignmentState, StudyStatus
from tests.builders import lease_pair

pytestmark = pytest.mark.django_db


def reserved(lease, *, served_ago: int, left: int):
    """The lease as if served `served_ago` minutes ago with `left` seconds to go."""
    now = timezone.now()
    lease.served_at = now - timedelta(minutes=served_ago)
    lease.expires_at = now + timedelta(seconds=left)
    lease.save(update_fields=["served_at", "expires_at"])
    return lease


def seconds_left(lease) -> float:
    lease.refresh_from_db()
    return (lease.expires_at - timezone.now()).total_seconds()


def test_keeping_an_item_reserves_it_for_another_lease_from_now(alice):
    lease = reserved(lease_pair(alice), served_ago=27, left=180)

    services.lease_keep(user=alice, token=lease.token)

    assert 30 * 60 - 5 < seconds_left(lease) <= 30 * 60
    assert lease.state == AssignmentState.ACTIVE


def test_an_item_is_kept_at_most_three_leases_from_when_it_was_served(alice):
    lease = reserved(lease_pair(alice), served_ago=80, left=120)

    services.lease_keep(user=alice, token=lease.token)
    assert 10 * 60 - 5 < seconds_left(lease) <= 10 * 60  # 90 minutes after it was served
    kept_until = lease.expires_at

    with pytest.raises(services.AnnotationError) as refusal:
        services.lease_keep(user=alice, token=lease.token)
    assert refusal.value.code == "kept_long"
    lease.refresh_from_db()
    assert lease.expires_at == kept_until


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("ran out", "lease_expired"),
        ("submitted", "already_submitted"),
        ("paused", "study_paused"),
    ],
)
def test_a_lease_no_longer_live_cannot_be_kept(alice, change, code):
    lease = reserved(lease_pair(alice), served_ago=10, left=600)
    if change == "ran out":
        lease = reserved(lease, served_ago=31, left=-1)
    elif change == "submitted":
        Assignment.objects.filter(pk=lease.pk).update(state=AssignmentState.SUBMITTED)
    else:
        lease.item.study.status = StudyStatus.PAUSED
        lease.item.study.save(update_fields=["status"])
    before = Assignment.objects.values("state", "expires_at").get(pk=lease.pk)

    with pytest.raises(services.AnnotationError) as refusal:
        services.lease_keep(user=alice, token=lease.token)

    assert refusal.value.code == code
    assert Assignment.objects.values("state", "expires_at").get(pk=lease.pk) == before


def test_another_annotators_lease_cannot_be_kept(alice, carol):
    lease = reserved(lease_pair(alice), served_ago=27, left=180)

    with pytest.raises(services.AnnotationError) as refusal:
        services.lease_keep(user=carol, token=lease.token)

    assert refusal.value.code == "not_yours"
    assert 170 < seconds_left(lease) <= 180


def test_the_rating_page_says_how_long_the_item_is_reserved(client, alice):
    lease = reserved(lease_pair(alice), served_ago=2, left=28 * 60)
    client.force_login(alice)

    page = client.get(f"/annotate/{lease.token}/").content.decode()

    assert "Reserved for you for 28 more minutes." in page
    assert 'data-seconds-left="16' in page  # 1679-1680 seconds
    # Far from its end the way to keep it is there for the countdown, but hidden.
    assert 'class="keep" hidden' in page


def test_near_its_end_the_page_offers_to_keep_it_and_the_button_keeps_it(client, alice):
    lease = reserved(lease_pair(alice), served_ago=26, left=4 * 60)
    client.force_login(alice)
    page = client.get(f"/annotate/{lease.token}/").content.decode()
    assert "Only 4 minutes left on this item: send your ratings, or keep it longer." in page
    assert 'class="keep">' in page

    kept = client.post(f"/annotate/{lease.token}/keep/", headers={"HX-Request": "true"})

    assert kept.status_code == 200
    assert "Reserved for you for 30 more minutes." in kept.content.decode()
    assert 30 * 60 - 5 < seconds_left(lease) <= 30 * 60


def test_a_keep_refused_says_why_and_offers_no_button(client, alice):
    lease = reserved(lease_pair(alice), served_ago=89, left=60)  # kept to the end already
    client.force_login(alice)

    refused = client.post(f"/annotate/{lease.token}/keep/", headers={"HX-Request": "true"})

    assert refused.status_code == 409
    body = refused.content.decode()
    assert "This item cannot be kept longer: other annotators are waiting for it." in body
    assert 'data-testid="keep"' not in body
    assert 0 < seconds_left(lease) <= 60
    # Nor does the line offer, now or as it counts down, what it cannot give.
    assert "keep it longer" not in body
    assert "Only 1 minute left on this item: send your ratings." in body


def test_an_item_kept_as_long_as_it_can_be_is_not_offered_to_be_kept(client, alice):
    lease = reserved(lease_pair(alice), served_ago=86, left=4 * 60)
    client.force_login(alice)

    page = client.get(f"/annotate/{lease.token}/").content.decode()

    assert "Only 4 minutes left on this item: send your ratings." in page
    assert "keep it longer" not in page
    assert 'data-soon-other="Only {m} minutes left on this item: send your ratings."' in page
    assert 'data-testid="keep"' not in page


def test_without_javascript_keeping_returns_to_the_item_with_its_new_time(client, alice):
    lease = reserved(lease_pair(alice), served_ago=26, left=4 * 60)
    client.force_login(alice)

    response = client.post(f"/annotate/{lease.token}/keep/", follow=True)

    assert response.redirect_chain[-1][0] == f"/annotate/{lease.token}/"
    assert "This item is kept for you until" in response.content.decode()
    assert seconds_left(lease) > 29 * 60


def test_keeping_is_a_post_and_another_annotators_token_is_not_found(client, alice, carol):
    lease = reserved(lease_pair(alice), served_ago=26, left=4 * 60)
    client.force_login(alice)
    assert client.get(f"/annotate/{lease.token}/keep/").status_code == 405
    client.force_login(carol)
    assert client.post(f"/annotate/{lease.token}/keep/").status_code == 404
    assert seconds_left(lease) <= 4 * 60
