"""Direct admission (`annotator_admit`, a panel's participants choosing their characters):
the same decision and audit trail as a staff approval per character, in a number of
statements that does not grow with the characters chosen, and counted at once by the
staffing every process shares."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import AuditAction, AuditEvent, Qualification
from annotation.selectors import staffing
from dialogues.models import Character
from tests.builders import UserFactory, approved_annotator, make_study

pytestmark = pytest.mark.django_db


def consenting(email: str):
    user = UserFactory(email=email)
    services.consent_give(user=user)
    return user


def statements_to_admit(user, characters) -> int:
    with CaptureQueriesContext(connection) as queries:
        services.annotator_admit(annotator=user, characters=characters, actor=None, note="panel")
    return len(queries.captured_queries)


def test_three_characters_take_as_many_statements_as_one(demo_dataset):
    characters = list(Character.objects.order_by("pk")[:3])
    assert len(characters) == 3

    one = statements_to_admit(consenting("one@example.com"), characters[:1])
    three = statements_to_admit(consenting("three@example.com"), characters)

    assert three == one
    assert Qualification.objects.filter(profile__user__email="three@example.com").count() == 3


def test_each_character_is_audited_as_a_staff_approval_would_be(demo_dataset, luffy, natsume):
    user = consenting("fan@example.com")
    services.characters_claim(user=user, characters=[natsume])
    claimed = Qualification.objects.get(profile__user=user)
    assert claimed.status == "claimed"

    profile = services.annotator_admit(
        annotator=user, characters=[natsume, luffy], actor=None, note="chosen on the panel"
    )

    assert profile.status == "approved"
    qualifications = {q.character_id: q for q in Qualification.objects.filter(profile=profile)}
    assert {q.status for q in qualifications.values()} == {"approved"}
    assert qualifications[natsume.pk].pk == claimed.pk  # the claim itself, approved
    assert {q.review_note for q in qualifications.values()} == {"chosen on the panel"}
    events = AuditEvent.objects.filter(action=AuditAction.QUALIFICATION_APPROVE).order_by("pk")
    assert [e.target_id for e in events] == [
        str(qualifications[c.pk].pk) for c in sorted([natsume, luffy], key=lambda c: c.pk)
    ]
    first, second = events
    assert first.before["profile_status"] == "screening"
    assert second.before["profile_status"] == "approved"
    by_target = {e.target_id: e for e in events}
    assert by_target[str(claimed.pk)].before["status"] == "claimed"
    assert by_target[str(qualifications[luffy.pk].pk)].before["status"] == "claimed"
    assert all(e.after["status"] == "approved" and e.note == "chosen on the panel" for e in events)
    assert all(e.actor is None and e.target_type == "qualification" for e in events)


def test_an_admission_counts_in_the_shared_staffing_at_once(demo_dataset, luffy, natsume):
    study = make_study(characters=[luffy, natsume])
    # Approved already (for another character): admitting them changes no profile row,
    # so only the admission itself can tell the shared copies.
    user = approved_annotator("known@example.com", [natsume])
    assert user.pk not in staffing.raters_by_character(study, [luffy.pk]).get(luffy.pk, [])

    services.annotator_admit(annotator=user, characters=[luffy], actor=None)

    assert user.pk in staffing.raters_by_character(study, [luffy.pk])[luffy.pk]


def test_a_refused_admission_changes_nothing(demo_dataset, luffy):
    user = UserFactory(email="no-consent@example.com")
    services.profile_get_or_create(user=user)
    with pytest.raises(services.AnnotationError):
        services.annotator_admit(annotator=user, characters=[luffy], actor=None)
    assert not Qualification.objects.filter(profile__user=user).exists()
    assert not AuditEvent.objects.exists()
