"""Data migrations carry existing rows forward."""

import pytest

from tests.fixtures.migrations import migrated_back_to

BEFORE = [("annotation", "0008_staff_operations")]
AFTER = [("annotation", "0009_flag_figures")]


@pytest.fixture
def migrator(transactional_db):
    with migrated_back_to(BEFORE) as executor:
        yield executor


def test_flag_and_pause_sentences_become_figures(migrator):
    old = migrator.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    Study = old.get_model("annotation", "Study")
    Source = old.get_model("dialogues", "Source")
    QualityFlag = old.get_model("annotation", "QualityFlag")
    AnnotatorProfile = old.get_model("annotation", "AnnotatorProfile")
    reference = Source.objects.create(slug="human", display_name="Human fans", kind="human")
    study = Study.objects.create(slug="s1", name="Spring study", reference_source=reference)
    paused = User.objects.create(username="p", email="p@example.com")
    manual = User.objects.create(username="m", email="m@example.com")
    AnnotatorProfile.objects.create(
        user=paused,
        pseudonym="p",
        status="suspended",
        paused_reason="paused automatically after 3 quality flags in s1",
    )
    AnnotatorProfile.objects.create(
        user=manual, pseudonym="m", status="suspended", paused_reason="ratings look random"
    )
    sentences = {
        "failed_check": "2 rating(s) outside the expected range",
        "straight_lining": "every rating is 4",
        "too_fast": "0.4 s, below 15 s",
        "low_agreement": "mean distance 2.75 from the others over 90 ratings",
    }
    for kind, detail in sentences.items():
        QualityFlag.objects.create(annotator=paused, study=study, kind=kind, detail=detail)
    QualityFlag.objects.create(
        annotator=manual, study=study, kind="too_fast", detail="written by hand"
    )

    migrator.loader.build_graph()
    migrator.migrate(AFTER)

    new = migrator.loader.project_state(AFTER).apps
    figures = {
        (f.annotator.username, f.kind): f.figures
        for f in new.get_model("annotation", "QualityFlag").objects.all()
    }
    assert figures == {
        ("p", "failed_check"): {"ratings": 2},
        ("p", "straight_lining"): {"value": 4},
        ("p", "too_fast"): {"seconds": 0.4, "minimum": 15.0},
        ("p", "low_agreement"): {"distance": 2.75, "ratings": 90},
        ("m", "too_fast"): {"text": "written by hand"},
    }
    profiles = {
        p.user.username: (p.paused_reason, p.automatic_pause)
        for p in new.get_model("annotation", "AnnotatorProfile").objects.all()
    }
    assert profiles == {
        "p": ("", {"flags": 3, "study": "Spring study"}),
        "m": ("ratings look random", {}),
    }
