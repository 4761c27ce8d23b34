"""A judgment names its item's study (`Judgment.study`): the progress line and the plans
count an annotator's judgments per study from it, without joining every judgment to its
item. Written by both ways of recording a judgment (one statement on PostgreSQL, several
for gold items and on SQLite), and carried onto judgments recorded before it existed."""

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from annotation import services
from annotation.models import Item, Judgment
from tests.builders import lease_pair
from tests.fixtures.migrations import migrated_back_to
from tests.helpers import full_ratings


def _submit(user, lease) -> Judgment:
    return services.judgment_submit(
        user=user,
        token=lease.token,
        submission=services.Submission(ratings=full_ratings(), preference="tie"),
    )


@pytest.mark.django_db
def test_a_judgment_is_filed_under_its_items_study_gold_or_not(alice, study):
    regular = _submit(alice, lease_pair(alice))
    lease = lease_pair(alice)
    Item.objects.filter(pk=lease.item_id).update(is_gold=True)
    lease.item.is_gold = True
    gold = _submit(alice, lease)

    for judgment in (regular, gold):
        judgment.refresh_from_db()
        assert judgment.study_id == study.pk == judgment.item.study_id
    assert not Judgment.objects.exclude(study_id=F("item__study_id")).exists()


BEFORE = [("annotation", "0012_item_diversity_source")]
AFTER = [("annotation", "0013_judgment_study")]


@pytest.fixture
def migrator(transactional_db):
    with migrated_back_to(BEFORE) as executor:
        yield executor


def test_judgments_recorded_before_get_the_study_of_their_item(migrator):
    old = migrator.loader.project_state(BEFORE).apps
    User = old.get_model("auth", "User")
    Source, Character = (
        old.get_model("dialogues", "Source"),
        old.get_model("dialogues", "Character"),
    )
    Study, Item_ = old.get_model("annotation", "Study"), old.get_model("annotation", "Item")
    Assignment = old.get_model("annotation", "Assignment")
    Judgment_ = old.get_model("annotation", "Judgment")
    human = Source.objects.create(slug="human", display_name="Human fans", kind="human")
    character = Character.objects.create(key="k", work_zh="w", name_zh="n")
    annotator = User.objects.create(username="a", email="a@example.com")
    now = timezone.now()
    filed = {}
    for slug in ("spring", "autumn"):
        study = Study.objects.create(slug=slug, name=slug, reference_source=human)
        for _ in range(2):
            item = Item_.objects.create(study=study, kind="diversity", character=character)
            lease = Assignment.objects.create(
                item=item,
                annotator=annotator,
                token=f"t{item.pk}",
                display_order=[0, 1, 2],
                served_at=now,
                expires_at=now + timedelta(minutes=30),
                state="submitted",
            )
            judgment = Judgment_.objects.create(
                item=item,
                annotator=annotator,
                assignment=lease,
                submitted_at=now,
                seconds_on_task=9,
            )
            filed[judgment.pk] = study.pk

    migrator.migrate(AFTER)
    new = migrator.loader.project_state(AFTER).apps.get_model("annotation", "Judgment")

    assert dict(new.objects.values_list("pk", "study_id")) == filed
    assert len(set(filed.values())) == 2
