"""Suspending and reinstating annotators, assigning them to studies with personal caps,
and the coverage of each character: every change audited, bad input refused."""

import re

import pytest

from annotation import selectors, services
from annotation.models import (
    AnnotatorProfile,
    Assignment,
    AuditEvent,
    ProfileStatus,
    StudyMembership,
)
from tests.builders import approved_annotator, lease_pair
from tests.helpers import submit

pytestmark = pytest.mark.django_db


def profile_of(user):
    return AnnotatorProfile.objects.get(user=user)


# Suspension --------------------------------------------------------------------------


def test_suspending_stops_work_at_once_and_is_audited(client, manager, alice):
    lease = services.assignment_next(user=alice)
    profile = profile_of(alice)
    client.force_login(manager)

    response = client.post(
        f"/staff/annotators/{profile.pk}/suspend/", {"reason": "ratings look random"}
    )

    assert response["Location"] == f"/staff/annotators/{profile.pk}/"
    profile.refresh_from_db()
    assert profile.status == ProfileStatus.SUSPENDED
    assert profile.paused_reason == "ratings look random"
    lease.refresh_from_db()
    assert lease.state == "expired"
    assert services.assignment_next(user=alice) is None
    event = AuditEvent.objects.get(action="annotator.suspend")
    assert event.actor == manager and event.note == "ratings look random"
    assert event.before == {"status": "approved", "paused_reason": ""}
    assert event.after["status"] == "suspended" and event.after["leases_released"] == 1


def test_reinstating_gives_work_again(client, manager, alice):
    profile = profile_of(alice)
    services.annotator_suspend(profile=profile, actor=manager, reason="check")
    client.force_login(manager)

    client.post(f"/staff/annotators/{profile.pk}/reinstate/", {"reason": "talked to them"})

    profile.refresh_from_db()
    assert profile.status == ProfileStatus.APPROVED and profile.paused_reason == ""
    assert services.assignment_next(user=alice) is not None
    event = AuditEvent.objects.get(action="annotator.reinstate")
    assert event.before["status"] == "suspended" and event.after["status"] == "approved"


@pytest.mark.parametrize(
    "action,reason,message",
    [
        ("suspend", "   ", "Please give a reason."),
        ("reinstate", "fine", "This annotator is not suspended."),
    ],
)
def test_bad_suspension_requests_are_refused_and_change_nothing(
    client, manager, alice, action, reason, message
):
    profile = profile_of(alice)
    client.force_login(manager)

    response = client.post(
        f"/staff/annotators/{profile.pk}/{action}/", {"reason": reason}, follow=True
    )

    assert message in response.content.decode()
    profile.refresh_from_db()
    assert profile.status == ProfileStatus.APPROVED
    assert not AuditEvent.objects.filter(target_type="annotatorprofile").exists()


def test_an_unknown_annotator_is_not_found(client, manager):
    client.force_login(manager)

    assert client.post("/staff/annotators/999999/suspend/", {"reason": "x"}).status_code == 404
    assert client.get("/staff/annotators/999999/").status_code == 404


def test_an_automatic_pause_is_audited_without_an_actor(strict_study, alice):
    strict_study.pause_after_flags = 1
    strict_study.save()

    submit(alice, lease_pair(alice))  # too fast: flagged, then paused

    event = AuditEvent.objects.get(action="annotator.suspend")
    assert event.actor is None and event.study == strict_study
    assert event.after == {
        "status": "suspended",
        "automatic_pause": {"flags": 1, "study": strict_study.name},
        "leases_released": 0,
    }
    assert event.reason == f"paused automatically after 1 open quality flag in {strict_study.name}"


def test_an_automatic_pause_returns_open_items_like_a_suspension(strict_study, alice):
    """A low-agreement flag arrives from the worker while the annotator is mid-item."""
    from annotation.models import Assignment, QualityFlag
    from annotation.services.quality import pause_if_flagged

    strict_study.pause_after_flags = 1
    strict_study.save()
    lease = lease_pair(alice)
    QualityFlag.objects.create(
        annotator=alice, study=strict_study, kind="low_agreement", figures={"distance": 2.6}
    )

    assert pause_if_flagged(annotator=alice, study=strict_study)
    assert not pause_if_flagged(annotator=alice, study=strict_study)  # already paused

    lease.refresh_from_db()
    assert lease.state == "expired"
    assert AuditEvent.objects.get(action="annotator.suspend").after["leases_released"] == 1
    assert not Assignment.objects.filter(annotator=alice, state="active").exists()


@pytest.fixture
def strict_study(demo_dataset):
    from tests.builders import make_study

    return make_study()


# The directory -----------------------------------------------------------------------


def test_the_directory_shows_work_time_and_flags(client, manager, alice, bob, luffy):
    submit(alice, lease_pair(alice))
    submit(alice, lease_pair(alice))
    client.force_login(manager)

    html = client.get("/staff/annotators/").content.decode()

    assert "alice@example.com" in html and "bob@example.com" in html
    [row] = selectors.annotator_rows([profile_of(alice)])
    assert row.judgments == 2
    assert row.open_flags == 2  # both were implausibly fast
    assert row.median_seconds is not None and row.median_seconds < 15
    assert [c.pk for c in row.approved_characters] == [luffy.pk]
    assert "Test study" in [s.name for s in row.studies]


def test_the_staff_pages_count_judgments_as_the_results_do(client, manager, alice):
    """A gold judgment and an excluded one are work done, but they are not counted in the
    results; the counted figure and its median time must not move because of them. The
    directory, the annotator's page and the study's members page show both bases."""
    from annotation.models import Item, Judgment

    counted = [submit(alice, lease_pair(alice)) for _ in range(2)]
    gold = submit(alice, lease_pair(alice))
    excluded = submit(alice, lease_pair(alice))
    for judgment, seconds in ((counted[0], 10), (counted[1], 20), (gold, 1000), (excluded, 2000)):
        Judgment.objects.filter(pk=judgment.pk).update(seconds_on_task=seconds)
    Item.objects.filter(pk=gold.item_id).update(is_gold=True)
    services.judgment_exclude(judgment=excluded, decided_by=manager, reason="copied answers")

    [row] = selectors.annotator_rows([profile_of(alice)])

    assert row.judgments == Judgment.objects.filter(annotator=alice).counted().count() == 2
    assert row.judgments_all == 4
    assert row.median_seconds == 15  # of the counted 10 and 20 s, not 510 over all four
    study = counted[0].item.study
    services.membership_add(study=study, annotator=alice, actor=manager)
    [member] = selectors.study_members(study)
    assert (member["judgments"], member["judgments_all"]) == (2, 4)
    client.force_login(manager)
    for url in (
        "/staff/annotators/",
        f"/staff/annotators/{profile_of(alice).pk}/",
        f"/staff/studies/{study.slug}/assignment/",
    ):
        html = client.get(url).content.decode()
        assert 'data-testid="counted-judgments">2<' in html, url
        assert 'data-testid="all-judgments">4<' in html, url


def test_the_directory_costs_the_same_queries_however_many_characters_are_approved(
    client, manager, alice, luffy, natsume
):
    """The published data has 20 characters: an annotator approved for all of them must
    not cost a query per character."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(manager)
    with CaptureQueriesContext(connection) as one_character:
        client.get("/staff/annotators/")
    approved_annotator("dora@example.com", [luffy, natsume])
    approved_annotator("erin@example.com", [luffy, natsume])

    with CaptureQueriesContext(connection) as more:
        html = client.get("/staff/annotators/").content.decode()

    assert "dora@example.com" in html and "erin@example.com" in html
    assert len(more) == len(one_character)


def test_many_approved_characters_fold_into_a_count(client, manager, study, luffy):
    """Twenty names in a narrow column made each row of the directory a screen tall: past
    three, the page says how many and lists them when asked."""
    from tests.builders import CharacterFactory

    many = [luffy, *CharacterFactory.create_batch(4)]
    study.characters.add(*many)
    approved_annotator("dora@example.com", many)
    approved_annotator("erin@example.com", many[:2])
    member = approved_annotator("fay@example.com", many)
    services.membership_add(study=study, annotator=member, actor=manager)
    client.force_login(manager)

    for url in ("/staff/annotators/", f"/staff/studies/{study.slug}/assignment/"):
        html = client.get(url).content.decode()
        assert "<summary>5 characters</summary>" in html, url
        folded = re.findall(r"<details class=\"names\">(.*?)</details>", html, re.S)
        assert folded and all(c.name_zh in folded[0] for c in many), url
    html = client.get("/staff/annotators/").content.decode()
    # Two: named as before, one a line.
    assert f"<span>{many[0].name_zh} · Monkey D. Luffy</span><span>{many[1].name_zh}</span>" in html


def test_the_directory_filters_by_status(client, manager, alice, bob):
    services.annotator_suspend(profile=profile_of(bob), actor=manager, reason="x")
    client.force_login(manager)

    html = client.get("/staff/annotators/?status=suspended").content.decode()

    assert "bob@example.com" in html and "alice@example.com" not in html


# Assignment --------------------------------------------------------------------------


def test_once_a_study_has_members_only_they_get_its_items(client, manager, study, alice, bob):
    client.force_login(manager)

    client.post(f"/staff/studies/{study.slug}/assignment/add/", {"profile": [profile_of(alice).pk]})

    assert StudyMembership.objects.filter(study=study, annotator=alice).exists()
    assert services.assignment_next(user=alice) is not None
    assert services.assignment_next(user=bob) is None
    event = AuditEvent.objects.get(action="membership.add")
    assert event.study == study and event.after["annotator"] == profile_of(alice).pseudonym


def test_a_personal_cap_overrides_the_study_cap(manager, study, alice):
    membership = services.membership_add(study=study, annotator=alice, actor=manager, cap=1)

    submit(alice, lease_pair(alice))

    assert services.assignment_next(user=alice) is None
    services.membership_cap_set(membership=membership, actor=manager, cap="")
    assert services.assignment_next(user=alice) is not None
    event = AuditEvent.objects.get(action="membership.cap")
    assert event.before == {"cap": 1} and event.after == {"cap": None}


def test_removing_a_member_releases_their_leases(client, manager, study, alice):
    membership = services.membership_add(study=study, annotator=alice, actor=manager)
    lease = services.assignment_next(user=alice)
    client.force_login(manager)

    client.post(f"/staff/studies/{study.slug}/assignment/{membership.pk}/", {"remove": "1"})

    assert not StudyMembership.objects.exists()
    lease.refresh_from_db()
    assert lease.state == "expired"
    assert AuditEvent.objects.filter(action="membership.remove").count() == 1


@pytest.mark.parametrize("cap", ["-1", "many", "2.5"])
def test_a_bad_personal_cap_is_refused_and_changes_nothing(client, manager, study, alice, cap):
    membership = services.membership_add(study=study, annotator=alice, actor=manager, cap=5)
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{study.slug}/assignment/{membership.pk}/", {"cap": cap}, follow=True
    )

    assert "A cap must be a whole number" in response.content.decode()
    membership.refresh_from_db()
    assert membership.cap == 5
    assert not AuditEvent.objects.filter(action="membership.cap").exists()


def test_assigning_nobody_or_a_member_twice_is_refused(client, manager, study, alice, bob):
    services.membership_add(study=study, annotator=alice, actor=manager)
    client.force_login(manager)

    nobody = client.post(f"/staff/studies/{study.slug}/assignment/add/", {}, follow=True)
    twice = client.post(
        f"/staff/studies/{study.slug}/assignment/add/",
        {"profile": [profile_of(bob).pk, profile_of(alice).pk]},
        follow=True,
    )

    assert "Choose at least one annotator." in nobody.content.decode()
    assert "already in the study" in twice.content.decode()
    # All or none: bob was not added either.
    assert list(StudyMembership.objects.values_list("annotator__email", flat=True)) == [
        "alice@example.com"
    ]


def test_coverage_shows_the_gap_per_character(client, manager, study, alice, bob, carol):
    rows = {row.character.name_zh: row for row in selectors.study_capacity(study)}

    # Three compared sources x two rounds x overlap 3 under the reference design.
    assert rows["蒙奇·D·路飞"].needed == 18
    assert rows["蒙奇·D·路飞"].approved == 2 and rows["蒙奇·D·路飞"].short == 16
    assert rows["夏目贵志"].approved == 1

    # A members-only study counts its members alone.
    services.membership_add(study=study, annotator=alice, actor=manager)
    rows = {row.character.name_zh: row for row in selectors.study_capacity(study)}
    assert rows["蒙奇·D·路飞"].approved == 1 and rows["夏目贵志"].approved == 0

    client.force_login(manager)
    html = client.get(f"/staff/studies/{study.slug}/assignment/").content.decode()
    assert 'data-testid="coverage"' in html and "bob@example.com" in html


def test_a_new_annotator_can_be_assigned(client, manager, study, luffy):
    newcomer = approved_annotator("new@example.com", [luffy])
    client.force_login(manager)

    html = client.get(f"/staff/studies/{study.slug}/assignment/").content.decode()

    assert f'value="{profile_of(newcomer).pk}"' in html
    assert not Assignment.objects.exists()


def test_a_personal_cap_is_adjusted_from_the_annotator_page(client, manager, study, alice):
    membership = services.membership_add(study=study, annotator=alice, actor=manager)
    profile = profile_of(alice)
    client.force_login(manager)
    page = client.get(f"/staff/annotators/{profile.pk}/").content.decode()
    assert f"/staff/studies/{study.slug}/assignment/{membership.pk}/" in page

    response = client.post(
        f"/staff/studies/{study.slug}/assignment/{membership.pk}/",
        {"cap": "25", "next": f"/staff/annotators/{profile.pk}/"},
    )

    assert response["Location"] == f"/staff/annotators/{profile.pk}/"
    membership.refresh_from_db()
    assert membership.cap == 25


def test_a_redirect_never_leaves_the_staff_pages(client, manager, study, alice):
    membership = services.membership_add(study=study, annotator=alice, actor=manager)
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{study.slug}/assignment/{membership.pk}/",
        {"cap": "3", "next": "https://evil.example.com/"},
    )

    assert response["Location"] == f"/staff/studies/{study.slug}/assignment/"


def test_the_directory_reads_agreement_from_the_computed_results(study, alice):
    from django.utils import timezone

    from annotation.models import StudyResults

    pseudonym = profile_of(alice).pseudonym
    StudyResults.objects.create(
        study=study,
        computed_at=timezone.now(),
        judgments=10,
        seconds=0.1,
        payload={
            "annotators": {
                pseudonym: {"mean_distance": 0.5, "units_compared": 30},
                "someone-else": {"mean_distance": 3.0, "units_compared": 90},
            }
        },
    )
    from tests.builders import make_study

    other = make_study()
    StudyResults.objects.create(
        study=other,
        computed_at=timezone.now(),
        judgments=10,
        seconds=0.1,
        payload={"annotators": {pseudonym: {"mean_distance": 1.5, "units_compared": 10}}},
    )

    [row] = selectors.annotator_rows([profile_of(alice)])

    # Weighted by the ratings compared: (0.5 x 30 + 1.5 x 10) / 40.
    assert row.mean_distance == pytest.approx(0.75)


def test_a_low_agreement_flag_is_reviewed_from_the_annotator_page(client, manager, study, alice):
    from annotation.models import QualityFlag

    flag = QualityFlag.objects.create(
        annotator=alice, study=study, kind="low_agreement", figures={"distance": 2.1, "ratings": 40}
    )
    profile = profile_of(alice)
    client.force_login(manager)
    assert (
        f'data-testid="flag-{flag.pk}"'
        in client.get(f"/staff/annotators/{profile.pk}/").content.decode()
    )

    refused = client.post(f"/staff/flags/{flag.pk}/resolve/", {"note": " "}, follow=True)
    flag.refresh_from_db()
    assert "Please give a reason." in refused.content.decode() and flag.resolved_at is None

    client.post(f"/staff/flags/{flag.pk}/resolve/", {"note": "read their comments: careful"})

    flag.refresh_from_db()
    assert flag.resolved_by == manager and flag.resolved_at is not None
    event = AuditEvent.objects.get(action="flag.resolve")
    assert event.note == "read their comments: careful" and event.study == study


def test_a_member_assigned_to_some_characters_rates_only_those(
    client, manager, study, luffy, natsume
):
    both = approved_annotator("both@example.com", [luffy, natsume])
    client.force_login(manager)

    client.post(
        f"/staff/studies/{study.slug}/assignment/add/",
        {"profile": [profile_of(both).pk], "character": [natsume.pk]},
    )

    for _ in range(3):
        lease = lease_pair(both)
        assert lease.item.character == natsume
        submit(both, lease)
    event = AuditEvent.objects.get(action="membership.add")
    assert event.after["characters"] == [natsume.pk]
    rows = {row.character.pk: row.approved for row in selectors.study_capacity(study)}
    assert rows[natsume.pk] == 1 and rows[luffy.pk] == 0


def test_assigning_a_character_outside_the_study_is_refused(manager, study, alice, luffy):
    from tests.builders import CharacterFactory

    stranger = CharacterFactory()

    with pytest.raises(services.AnnotationError) as refusal:
        services.membership_add(study=study, annotator=alice, actor=manager, characters=[stranger])

    assert refusal.value.code == "foreign_character"
    assert not StudyMembership.objects.exists()
    assert not AuditEvent.objects.filter(action="membership.add").exists()


def test_a_member_assigned_only_to_characters_they_are_not_approved_for_gets_nothing(
    manager, study, alice, natsume
):
    services.membership_add(study=study, annotator=alice, actor=manager, characters=[natsume])

    assert services.assignment_next(user=alice) is None


def test_simulated_annotators_are_no_capacity(study, alice, luffy):
    simulated = approved_annotator("sim@example.com", [luffy])
    AnnotatorProfile.objects.filter(user=simulated).update(simulated=True)

    rows = {row.character.pk: row.approved for row in selectors.study_capacity(study)}

    assert rows[luffy.pk] == 1
