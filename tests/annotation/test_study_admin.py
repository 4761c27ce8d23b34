"""The admin's New study form: rounds ticked rather than typed as JSON, the reference kept
out of the compared sources, labels in the admin's language; a refused form saves nothing."""

import pytest

from annotation.models import AuditEvent, Study
from dialogues.models import Character, Source

pytestmark = pytest.mark.django_db


def new_study(**changes):
    human = Source.objects.get(slug="human")
    data = {
        "slug": "spring",
        "name": "Spring study",
        "status": "draft",
        "reference_source": human.pk,
        "compared_sources": [s.pk for s in Source.objects.exclude(pk=human.pk)],
        "characters": [c.pk for c in Character.objects.all()],
        "rounds": ["1", "2"],
        "overlap": 3,
        "diversity_set_size": 4,
        "screening_pass_mark": 0.8,
        "lease_minutes": 30,
        "break_every_items": 20,
        "break_every_minutes": 45,
        "design": "reference",
        "cap_per_annotator": 0,
        "cap_per_annotator_per_day": 0,
        "gold_rate": 0,
        "min_seconds_per_item": 15,
        "low_agreement_threshold": 0,
        "low_agreement_min_units": 20,
        "pause_after_flags": 0,
        "balance_characters": "on",
        "flag_straight_lining": "on",
    }
    data.update(changes)
    return data


def test_a_study_made_in_the_admin_has_the_rounds_ticked(admin_client, demo_dataset):
    response = admin_client.post("/admin/annotation/study/add/", new_study(rounds=["2"]))

    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="spring")
    assert study.rounds == [2]
    assert AuditEvent.objects.get(action="study.create").after["rounds"] == [2]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"rounds": []}, "Choose round 1, round 2 or both."),
        ({"rounds": ["3"]}, "Select a valid choice"),
        ({"rounds": "[1, 2]"}, "Select a valid choice"),
        (
            {"compared_sources": "REFERENCE_TOO"},
            "The reference source (Human fans) cannot also be a compared source.",
        ),
    ],
)
def test_a_study_the_rules_refuse_is_not_made(admin_client, demo_dataset, changes, said):
    if changes.get("compared_sources") == "REFERENCE_TOO":
        changes = {"compared_sources": [s.pk for s in Source.objects.all()]}

    response = admin_client.post("/admin/annotation/study/add/", new_study(**changes))

    assert response.status_code == 200
    assert said in response.content.decode()
    assert not Study.objects.exists()
    assert not AuditEvent.objects.exists()


def test_the_form_speaks_the_admins_language(admin_client, demo_dataset):
    admin_client.cookies["django_language"] = "zh-hans"

    page = admin_client.get("/admin/annotation/study/add/").content.decode()

    for label in ("参照来源", "对比来源", "第 1 轮", "筛选合格线", "保留分钟数", "金标准题比例"):
        assert label in page
    for english in ("Reference source", "Screening pass mark", "Lease minutes", "Gold rate"):
        assert english not in page
    assert 'type="checkbox" name="rounds" value="1"' in page


DESIGN = ["reference_source", "compared_sources", "characters", "scenarios", "rounds", "design"]


def test_an_opened_studys_design_is_fixed_in_the_admin(admin_client, demo_dataset, luffy):
    from annotation import services

    admin_client.post("/admin/annotation/study/add/", new_study(characters=[luffy.pk]))
    study = Study.objects.get(slug="spring")
    services.study_open(study=study)
    items = study.items.count()

    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    response = admin_client.post(
        f"/admin/annotation/study/{study.pk}/change/",
        new_study(characters=[c.pk for c in Character.objects.all()], rounds=["1"], overlap=2),
    )

    # Opening made the items from the design: a character added later would get none.
    for field in [*DESIGN, "include_diversity", "diversity_set_size"]:
        assert f'name="{field}"' not in page
    assert "Fixed once the study is opened" in page
    assert response.status_code == 302, response.content.decode()[:3000]
    study.refresh_from_db()
    assert list(study.characters.all()) == [luffy]
    assert study.rounds == [1, 2]
    assert study.overlap == 2  # read as items are served: still a setting
    assert study.items.count() == items


def test_a_drafts_design_can_still_be_changed(admin_client, demo_dataset):
    admin_client.post("/admin/annotation/study/add/", new_study())
    study = Study.objects.get(slug="spring")

    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()

    for field in DESIGN:
        assert f'name="{field}"' in page
