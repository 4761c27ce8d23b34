"""Who has reached their cap, as the look-ahead counts them: the study's cap, or a
member's own cap where staff set one (0: none), over the study's judgments only."""

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, ItemKind, Judgment, Study, StudyMembership
from annotation.selectors import lookahead, staffing
from tests.builders import approved_annotator, late_scenario, make_study
from tests.helpers import submit_item

pytestmark = pytest.mark.django_db


def judgments_given(user, study, n):
    for _ in range(n):
        submit_item(user, services.assignment_next(user=user, study=study))


def fresh(study) -> Study:
    staffing.staffing_forget()
    return Study.objects.get(pk=study.pk)


def test_the_study_cap_and_members_own_caps_say_who_has_reached_theirs(
    demo_dataset, luffy, natsume
):
    study = make_study(characters=[luffy])
    other = make_study(characters=[natsume])
    alice = approved_annotator("alice-cap@example.com", [luffy, natsume])
    bob = approved_annotator("bob-cap@example.com", [luffy])
    judgments_given(alice, study, 2)
    judgments_given(bob, study, 1)
    judgments_given(alice, other, 3)

    Study.objects.update(cap_per_annotator=2)
    assert staffing.at_their_cap(fresh(study)) == {alice.pk}
    # Alice's three judgments in the other study count there only.
    assert staffing.at_their_cap(fresh(other)) == {alice.pk}
    Study.objects.filter(pk=other.pk).update(cap_per_annotator=4)
    assert staffing.at_their_cap(fresh(other)) == frozenset()

    # A member's own cap overrides the study's: 0 is no cap.
    StudyMembership.objects.create(study=study, annotator=alice, cap=0)
    StudyMembership.objects.create(study=study, annotator=bob, cap=1)
    assert staffing.at_their_cap(fresh(study)) == {bob.pk}
    # Without a cap on the study, members' own caps still count.
    Study.objects.filter(pk=study.pk).update(cap_per_annotator=0)
    assert staffing.at_their_cap(fresh(study)) == {bob.pk}
    StudyMembership.objects.filter(annotator=bob).update(cap=None)
    assert staffing.at_their_cap(fresh(study)) == frozenset()


def test_who_has_reached_their_cap_is_counted_at_most_once_a_minute(
    demo_dataset, luffy, monkeypatch
):
    study = make_study(characters=[luffy])
    Study.objects.update(cap_per_annotator=1)
    study = fresh(study)
    alice = approved_annotator("alice-cap@example.com", [luffy])
    assert staffing.at_their_cap(study) == frozenset()

    judgments_given(alice, study, 1)

    # Only the look-ahead's estimate waits for the minute: the cap itself is checked
    # when each lease is taken (tests/annotation/test_pairing_policy.py).
    assert staffing.at_their_cap(study) == frozenset()
    a_minute_later(monkeypatch)
    assert staffing.at_their_cap(study) == {alice.pk}


def a_judgment_elsewhere_in(study, bob, luffy):
    """Bob's judgment of a pair in another scenario of the study than the late one, so
    that it changes his count in the study and nothing else the look-ahead weighs."""
    late = study.items.filter(kind=ItemKind.PAIR).order_by("scenario__number").last().scenario
    item = study.items.filter(kind=ItemKind.PAIR).exclude(scenario=late).first()
    now = timezone.now()
    lease = Assignment.objects.create(
        item=item,
        annotator=bob,
        state="submitted",
        display_order=[0, 1],
        served_at=now,
        expires_at=now,
    )
    Judgment.objects.create(
        item=item, study=study, annotator=bob, assignment=lease, submitted_at=now, seconds_on_task=9
    )


@pytest.mark.parametrize("whose_cap", ["study", "member"])
def test_the_look_ahead_keeps_no_item_for_someone_who_has_reached_their_cap(
    demo_dataset, luffy, whose_cap
):
    study, bob, only_for_bob, open_to_all = late_scenario(luffy)
    alice = approved_annotator("alice-late@example.com", [luffy])
    a_judgment_elsewhere_in(study, bob, luffy)
    candidates = [only_for_bob.pk, open_to_all.pk]

    def costs():
        return lookahead.stranding_costs_of(alice, fresh(study), candidates, timezone.now())

    # Bob can still rate: the pair only he can take is kept for him.
    assert costs() == {only_for_bob.pk: 1, open_to_all.pk: 0}

    if whose_cap == "study":
        Study.objects.filter(pk=study.pk).update(cap_per_annotator=1)
    else:
        StudyMembership.objects.create(study=study, annotator=alice)
        StudyMembership.objects.create(study=study, annotator=bob, cap=1)

    # Bob has given all he may: taking his pair strands nothing.
    assert costs() == {only_for_bob.pk: 0, open_to_all.pk: 0}


def a_minute_later(monkeypatch):
    """The clock, just past the time a copy of staffing is trusted."""
    later = staffing.time.time() + staffing.STAFFING_SECONDS + 1
    monkeypatch.setattr(staffing.time, "time", lambda: later)
