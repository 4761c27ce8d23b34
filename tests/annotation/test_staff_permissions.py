"""Every staff URL, for every kind of visitor: anonymous people are sent to log in,
annotators and researchers are refused, study managers and admins get in (the audit
trail included: a manager reads their own actions there). Refused posts change nothing."""

import pytest

from annotation import services
from annotation.models import (
    AnnotatorProfile,
    AuditEvent,
    ProfileStatus,
    Qualification,
    QualityFlag,
    StudyMembership,
)
from tests.builders import UserFactory, researcher_named, study_manager_named
from tests.helpers import submit

pytestmark = pytest.mark.django_db

LOGIN = "login"


@pytest.fixture
def world(study, alice, luffy):
    judgment = submit(alice, services.assignment_next(user=alice))
    researcher = researcher_named("researcher@example.com")
    manager = study_manager_named("manager@example.com")
    admin = UserFactory(email="admin@example.com", is_staff=True)
    membership = services.membership_add(study=study, annotator=alice, actor=admin, cap=7)
    flag = QualityFlag.objects.filter(judgment=judgment).first()
    return {
        "flag": flag,
        "membership": membership,
        "study": study,
        "judgment": judgment,
        "profile": AnnotatorProfile.objects.get(user=alice),
        "qualification": Qualification.objects.get(profile__user=alice),
        "visitors": {
            "anonymous": None,
            "annotator": alice,
            "researcher": researcher,
            "study_manager": manager,
            "admin": admin,
        },
    }


STAFF_ONLY = {
    "anonymous": LOGIN,
    "annotator": 403,
    "researcher": 403,
    "study_manager": 200,
    "admin": 200,
}
# A refused post must not reach the service; an empty post from staff is bad input that
# comes back to the page with a message (302) and changes nothing either.
STAFF_POST = {**STAFF_ONLY, "study_manager": 302, "admin": 302}

MATRIX = {
    ("get", "/staff/"): STAFF_ONLY,
    ("get", "/staff/screening/"): STAFF_ONLY,
    ("get", "/staff/applicants/{profile}/"): STAFF_ONLY,
    ("get", "/staff/annotators/"): STAFF_ONLY,
    ("get", "/staff/annotators/{profile}/"): STAFF_ONLY,
    ("get", "/staff/studies/{study}/"): STAFF_ONLY,
    ("get", "/staff/studies/{study}/assignment/"): STAFF_ONLY,
    ("get", "/staff/audit/"): STAFF_ONLY,
    ("get", "/staff/audit/?action=writing.edit"): STAFF_ONLY,
    ("get", "/staff/audit/?action=collection.run_start"): STAFF_ONLY,
    ("post", "/staff/screening/review/"): STAFF_POST,
    ("post", "/staff/annotators/{profile}/suspend/"): STAFF_POST,
    ("post", "/staff/studies/{study}/caps/"): STAFF_POST,
    ("post", "/staff/studies/{study}/status/"): STAFF_POST,
    ("post", "/staff/studies/{study}/judgments/{judgment}/decide/"): STAFF_POST,
    ("post", "/staff/studies/{study}/assignment/add/"): STAFF_POST,
    ("post", "/staff/studies/{study}/assignment/{membership}/"): STAFF_POST,
    ("post", "/staff/flags/{flag}/resolve/"): STAFF_POST,
}

CASES = [
    (method, url, visitor, expected)
    for (method, url), row in MATRIX.items()
    for visitor, expected in row.items()
]


def snapshot(world):
    study = world["study"]
    study.refresh_from_db()
    world["judgment"].refresh_from_db()
    return (
        AuditEvent.objects.count(),
        list(StudyMembership.objects.values_list("pk", "cap")),
        AnnotatorProfile.objects.get(pk=world["profile"].pk).status,
        Qualification.objects.get(pk=world["qualification"].pk).status,
        study.status,
        study.cap_per_annotator,
        study.cap_per_annotator_per_day,
        world["judgment"].excluded,
        QualityFlag.objects.get(pk=world["flag"].pk).resolved_at,
    )


@pytest.mark.parametrize(
    "method,url,visitor,expected", CASES, ids=[f"{m} {u} as {v}" for m, u, v, _ in CASES]
)
def test_staff_urls_answer_each_visitor_as_they_should(
    client, world, method, url, visitor, expected
):
    user = world["visitors"][visitor]
    if user is not None:
        client.force_login(user)
    path = url.format(
        profile=world["profile"].pk,
        study=world["study"].slug,
        judgment=world["judgment"].pk,
        membership=world["membership"].pk,
        flag=world["flag"].pk,
    )
    before = snapshot(world)

    response = getattr(client, method)(path, {} if method == "post" else None)

    if expected == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    else:
        assert response.status_code == expected
    assert snapshot(world) == before


def test_the_staff_link_shows_only_to_study_managers_and_admins(client, world):
    for visitor, shown in [
        ("annotator", False),
        ("researcher", False),
        ("study_manager", True),
        ("admin", True),
    ]:
        client.force_login(world["visitors"][visitor])
        html = client.get("/").content.decode()
        assert ('href="/staff/"' in html) is shown, visitor


def test_the_audit_link_shows_to_study_managers_and_admins(client, world):
    for visitor in ("study_manager", "admin"):
        client.force_login(world["visitors"][visitor])
        assert 'href="/staff/audit/"' in client.get("/staff/").content.decode(), visitor


def test_a_study_manager_reads_results_like_a_researcher(client, world):
    client.force_login(world["visitors"]["study_manager"])

    assert client.get("/results/").status_code == 200


def test_a_suspended_profile_stays_suspended_after_a_refused_reinstatement(client, world):
    profile = world["profile"]
    services.annotator_suspend(profile=profile, actor=None, reason="checking")
    client.force_login(world["visitors"]["researcher"])

    response = client.post(f"/staff/annotators/{profile.pk}/reinstate/", {"reason": "ok"})

    assert response.status_code == 403
    assert AnnotatorProfile.objects.get(pk=profile.pk).status == ProfileStatus.SUSPENDED
