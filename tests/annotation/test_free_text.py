"""Free text that people type is stored on PostgreSQL whatever it holds: its text type
cannot hold NUL characters, which browsers and scripts can still send."""

import pytest

from annotation import services
from annotation.models import (
    AuditEvent,
    Judgment,
    Qualification,
    QualityFlag,
)
from tests.builders import UserFactory, applicant_who_passed, lease_pair
from tests.helpers import submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TYPED = " why\x00 not \x00"
STORED = "why not"


def test_every_service_that_stores_typed_text_drops_nul_characters(
    postgres,
    study,
    alice,
    bob,
    luffy,
    question_bank,
):
    staff = UserFactory(email="boss@example.com", is_staff=True)

    skipped = services.assignment_skip(user=bob, token=lease_pair(bob).token, reason=TYPED)
    judgment = submit(alice, lease_pair(alice))
    services.judgment_exclude(judgment=judgment, decided_by=staff, reason=TYPED)
    flag = QualityFlag.objects.create(annotator=alice, study=study, kind="low_agreement")
    services.flag_resolve(flag=flag, resolved_by=staff, note=TYPED)
    services.study_caps_set(
        study=study,
        actor=staff,
        caps={"cap_per_annotator": 5, "cap_per_annotator_per_day": 0},
        note=TYPED,
    )
    fan = applicant_who_passed("fan@example.com", [luffy], sample=TYPED)
    services.qualifications_review(
        qualifications=list(Qualification.objects.filter(profile__user=fan)),
        reviewer=staff,
        approve=True,
        note=TYPED,
    )
    profile = services.annotator_suspend(profile=bob.annotator_profile, actor=staff, reason=TYPED)

    skipped.refresh_from_db()
    assert skipped.skip_reason == STORED
    assert Judgment.objects.get(pk=judgment.pk).decisions.get().reason == STORED
    qualification = Qualification.objects.get(profile__user=fan)
    assert (qualification.roleplay_sample, qualification.review_note) == (STORED, STORED)
    profile.refresh_from_db()
    assert profile.paused_reason == STORED
    notes = set(AuditEvent.objects.exclude(note="").values_list("note", flat=True))
    assert notes == {STORED}
