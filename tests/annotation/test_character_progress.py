"""A study's progress per character (`CharacterProgress`): counted by each submission,
recounted where items change otherwise, and always what the study's items count."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Count, Sum

from annotation import selectors, services
from annotation.models import CharacterProgress, GoldExpectation, Item, ItemKind, Judgment, Study
from annotation.selectors import eligibility
from tests.builders import approved_annotator, make_study
from tests.fixtures.migrations import migrated_back_to
from tests.helpers import full_ratings, submit_item

pytestmark = pytest.mark.django_db


def counted_from_items(study) -> dict[int, tuple[int, int]]:
    """Per character: judgments and items, gold aside, summed from the items."""
    return {
        row["character_id"]: (row["judgments"], row["items"])
        for row in Item.objects.filter(study=study, is_gold=False)
        .order_by()
        .values("character_id")
        .annotate(items=Count("pk"), judgments=Sum("judgment_count"))
    }


def kept(study) -> dict[int, tuple[int, int]]:
    return {
        character_id: (judgments, items)
        for character_id, judgments, items in CharacterProgress.objects.filter(
            study=study
        ).values_list("character_id", "judgments", "items")
    }


def rate(user, n: int) -> list:
    leases = []
    while len(leases) < n and (lease := services.assignment_next(user=user)) is not None:
        submit_item(user, lease)
        leases.append(lease)
    return leases


def test_a_study_opens_with_its_characters_items_counted(demo_dataset):
    study = make_study()

    assert kept(study) == counted_from_items(study)
    assert all(judgments == 0 and items > 0 for judgments, items in kept(study).values())


def test_each_judgment_counts_on_its_character_and_gold_ones_do_not(demo_dataset, luffy, natsume):
    study = make_study(rounds=(1,))
    Study.objects.filter(pk=study.pk).update(gold_rate=0.25, min_seconds_per_item=0)
    for item in study.items.filter(character=luffy, kind=ItemKind.PAIR).order_by("pk")[:4]:
        item.is_gold = True
        item.save()
        GoldExpectation.objects.create(item=item, metric_id=None, minimum=1, maximum=5)
    services.character_progress_recount(study=study)
    first = approved_annotator("first@example.com", [luffy, natsume])
    second = approved_annotator("second@example.com", [luffy])

    leases = rate(first, 12) + rate(second, 8)

    assert any(lease.item.is_gold for lease in leases)
    assert any(not lease.item.is_gold for lease in leases)
    assert kept(study) == counted_from_items(study)
    given = Judgment.objects.filter(study=study, item__is_gold=False).count()
    assert sum(judgments for judgments, _items in kept(study).values()) == given > 0


def test_a_plan_reads_the_progress_kept(demo_dataset, luffy, natsume):
    study = make_study(overlap=3)
    CharacterProgress.objects.filter(study=study, character=luffy).update(judgments=7)
    study = Study.objects.get(pk=study.pk)

    progress = eligibility.character_progress(study, [luffy.pk, natsume.pk])

    luffy_items = Item.objects.filter(study=study, character=luffy, is_gold=False).count()
    assert progress[luffy.pk] == (7, 3 * luffy_items)
    assert progress[natsume.pk][0] == 0


def test_marking_an_item_gold_in_the_admin_recounts_its_character(
    admin_client, study, django_capture_on_commit_callbacks
):
    item = Item.objects.filter(study=study, kind=ItemKind.PAIR).first()
    Item.objects.filter(pk=item.pk).update(judgment_count=2)
    services.character_progress_recount(study=study)
    judgments, items = kept(study)[item.character_id]

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            f"/admin/annotation/item/{item.pk}/change/",
            {
                "is_gold": "on",
                "gold_expectations-TOTAL_FORMS": "0",
                "gold_expectations-INITIAL_FORMS": "0",
            },
        )

    assert kept(study)[item.character_id] == (judgments - 2, items - 1)
    assert kept(study) == counted_from_items(study)


BEFORE = [("annotation", "0015_items_updated_in_place")]
AFTER = [("annotation", "0016_character_progress")]


@pytest.fixture
def migrator(transactional_db):
    with migrated_back_to(BEFORE) as executor:
        yield executor


def test_studies_made_before_get_their_progress_counted(migrator):
    old = migrator.loader.project_state(BEFORE).apps
    Source, Character = (
        old.get_model("dialogues", "Source"),
        old.get_model("dialogues", "Character"),
    )
    Study, Item_ = old.get_model("annotation", "Study"), old.get_model("annotation", "Item")
    human = Source.objects.create(slug="human", display_name="Human fans", kind="human")
    first, second, gold_only = (
        Character.objects.create(key=key, work_zh="w", name_zh=key) for key in ("a", "b", "c")
    )
    study = Study.objects.create(slug="s", name="s", reference_source=human)
    for character, counts, gold in (
        (first, [3, 1, 0], [2]),
        (second, [2], []),
        (gold_only, [], [1]),
    ):
        for n in counts:
            Item_.objects.create(study=study, kind="pair", character=character, judgment_count=n)
        for n in gold:
            Item_.objects.create(
                study=study, kind="pair", character=character, judgment_count=n, is_gold=True
            )

    migrator.migrate(AFTER)

    new = migrator.loader.project_state(AFTER).apps
    Progress = new.get_model("annotation", "CharacterProgress")
    assert {row.character_id: (row.judgments, row.items) for row in Progress.objects.all()} == {
        first.pk: (4, 3),
        second.pk: (2, 1),
        gold_only.pk: (0, 0),
    }


def test_a_judgment_of_an_item_marked_gold_since_it_was_served_does_not_count(demo_dataset, luffy):
    study = make_study(rounds=(1,), characters=[luffy])
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    annotator = approved_annotator("marked@example.com", [luffy])
    served = services.assignment_next(user=annotator)
    page = selectors.own_lease(annotator, served.token)
    assert not page.item.is_gold
    # Staff mark it gold while the annotator rates it; the admin recounts after its commit.
    Item.objects.filter(pk=served.item_id).update(is_gold=True)
    services.character_progress_recount(study=study)

    # The submission carries the lease as the rating page read it, before the change.
    services.judgment_submit(
        user=annotator,
        token=page.token,
        submission=services.Submission(
            ratings=full_ratings(4), preference="a", human_guess="unsure"
        ),
        assignment=page,
    )

    assert Judgment.objects.filter(assignment=served).exists()
    assert kept(study) == counted_from_items(study)


def test_deleting_items_in_the_admin_recounts_their_characters(
    admin_client, study, django_capture_on_commit_callbacks
):
    items = list(Item.objects.filter(study=study, kind=ItemKind.PAIR).order_by("pk")[:3])

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(f"/admin/annotation/item/{items[0].pk}/delete/", {"post": "yes"})
        admin_client.post(
            "/admin/annotation/item/",
            {
                "action": "delete_selected",
                "_selected_action": [str(item.pk) for item in items[1:]],
                "post": "yes",
            },
        )

    assert not Item.objects.filter(pk__in=[item.pk for item in items]).exists()
    assert kept(study) == counted_from_items(study)


def test_recount_progress_repairs_a_drifted_count(demo_dataset, luffy):
    study = make_study(characters=[luffy])
    right = kept(study)
    CharacterProgress.objects.filter(study=study).update(judgments=99, items=1)
    out = StringIO()

    call_command("recount_progress", stdout=out)

    assert kept(study) == right == counted_from_items(study)
    assert f"{study.slug}: 1 characters, 1 counted differently before" in out.getvalue()


def test_recount_progress_of_an_unknown_study_changes_nothing(demo_dataset, luffy):
    study = make_study(characters=[luffy])
    CharacterProgress.objects.filter(study=study).update(judgments=99)

    with pytest.raises(CommandError, match="no study"):
        call_command("recount_progress", "--study", "nope")

    assert kept(study)[luffy.pk][0] == 99
