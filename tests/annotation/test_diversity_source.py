"""A diversity set names its source (`Item.diversity_source`): filled when items are
generated, carried forward for existing sets by a data migration, and the one place the
results, both exports and the progress by source take a set's source from. Beside it,
the one definition of a counted judgment, in the three forms its readers use."""

import csv
import io
from itertools import product

import pytest
from django.db import connection

from annotation import selectors, services
from annotation.exports import export_chunks
from annotation.exports.rows import long_rows
from annotation.models import COUNTED_JUDGMENT_SQL, Item, ItemKind, Judgment, is_counted
from annotation.results.loading import load_ratings, load_ratings_rows
from annotation.simulation import simulate_study
from dialogues.models import Source
from tests.builders import make_study
from tests.fixtures.migrations import migrated_back_to


@pytest.fixture
def diverse(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=2, rounds=(1,), include_diversity=True, characters=[luffy])
    simulate_study(study=study, annotators=4, seed=3)
    return study


@pytest.mark.django_db
def test_generated_sets_name_the_source_of_their_answers_and_pairs_name_none(diverse):
    sets = Item.objects.filter(study=diverse, kind=ItemKind.DIVERSITY)
    assert sets.exists()
    for item in sets.prefetch_related("answers"):
        assert {answer.source_id for answer in item.answers.all()} == {item.diversity_source_id}
    assert not Item.objects.filter(
        study=diverse, kind=ItemKind.PAIR, diversity_source__isnull=False
    ).exists()


def _relabel_one_set(study) -> tuple[Item, Source]:
    """Point one judged set at another source than its answers': what a reader shows for
    it then tells whether it read the field or the answers."""
    item = Item.objects.filter(study=study, kind=ItemKind.DIVERSITY, judgment_count__gt=0).first()
    other = Source.objects.exclude(pk=item.diversity_source_id).order_by("pk").first()
    Item.objects.filter(pk=item.pk).update(diversity_source=other)
    return item, other


def _sources_of(data, item) -> set[int]:
    return set(data["source"][data["item"] == item.pk].tolist())


@pytest.mark.django_db
def test_results_export_and_progress_take_a_sets_source_from_the_item(diverse):
    before = {row.label: row.items for row in selectors.study_progress(diverse)["by_source"]}
    item, other = _relabel_one_set(diverse)

    assert _sources_of(load_ratings_rows(diverse), item) == {other.pk}
    assert {row["source"] for row in long_rows(diverse) if row["item"] == item.pk} == {other.slug}
    after = {row.label: row.items for row in selectors.study_progress(diverse)["by_source"]}
    assert after[other.display_name] == before.get(other.display_name, 0) + 1
    assert services.study_recompute(study=diverse).payload["diversity"][other.slug]["n"] >= 1


@pytest.mark.integration
def test_the_postgres_paths_take_a_sets_source_from_the_item_too(postgres, diverse):
    item, other = _relabel_one_set(diverse)

    assert _sources_of(load_ratings(diverse), item) == {other.pk}
    exported = export_chunks(diverse, "csv", engine="copy")
    rows = list(csv.DictReader(io.StringIO(b"".join(exported).decode())))
    assert {row["source"] for row in rows if row["item"] == str(item.pk)} == {other.slug}


BEFORE = [("annotation", "0011_pseudonyms_never_start_like_a_formula")]
AFTER = [("annotation", "0012_item_diversity_source")]


@pytest.fixture
def migrator(transactional_db):
    with migrated_back_to(BEFORE) as executor:
        yield executor


def test_existing_sets_get_the_source_of_their_answers(migrator):
    old = migrator.loader.project_state(BEFORE).apps
    Source_, Character = (
        old.get_model("dialogues", "Source"),
        old.get_model("dialogues", "Character"),
    )
    Scenario, Answer = old.get_model("dialogues", "Scenario"), old.get_model("dialogues", "Answer")
    Study, Item_ = old.get_model("annotation", "Study"), old.get_model("annotation", "Item")
    ItemAnswer = old.get_model("annotation", "ItemAnswer")
    human = Source_.objects.create(slug="human", display_name="Human fans", kind="human")
    model = Source_.objects.create(slug="kumo", display_name="Kumo", kind="llm")
    character = Character.objects.create(key="k", work_zh="w", name_zh="n")
    study = Study.objects.create(slug="s1", name="Study", reference_source=human)

    def answer(source, number):
        scenario = Scenario.objects.get_or_create(
            number=number, defaults={"question": "q", "persona_group": "student"}
        )[0]
        return Answer.objects.create(
            character=character, scenario=scenario, source=source, round=1, question="q", text="t"
        )

    sets = {}
    for source in (human, model):
        item = Item_.objects.create(study=study, kind="diversity", character=character)
        for slot, number in enumerate((1, 2, 3)):
            ItemAnswer.objects.create(item=item, answer=answer(source, number), slot=slot)
        sets[item.pk] = source.pk
    pair = Item_.objects.create(
        study=study,
        kind="pair",
        character=character,
        scenario=Scenario.objects.get(number=1),
        round=1,
    )
    ItemAnswer.objects.create(item=pair, answer=answer(human, 4), slot=0)
    ItemAnswer.objects.create(item=pair, answer=answer(model, 4), slot=1)

    migrator.migrate(AFTER)
    new = migrator.loader.project_state(AFTER).apps.get_model("annotation", "Item")

    for pk, source in sets.items():
        assert new.objects.get(pk=pk).diversity_source_id == source
    assert new.objects.get(pk=pair.pk).diversity_source_id is None


@pytest.mark.django_db
def test_the_three_forms_of_a_counted_judgment_agree(diverse):
    judgments = list(Judgment.objects.filter(item__study=diverse).order_by("pk"))
    one_per_item = list({j.item_id: j for j in judgments}.values())
    # Every combination of excluded and gold, on judgments of four different items.
    for judgment, (excluded, gold) in zip(
        one_per_item, product((False, True), repeat=2), strict=False
    ):
        Judgment.objects.filter(pk=judgment.pk).update(excluded=excluded)
        Item.objects.filter(pk=judgment.item_id).update(is_gold=gold)
    by_orm = set(
        Judgment.objects.filter(item__study=diverse).counted().values_list("pk", flat=True)
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT j.id FROM annotation_judgment j JOIN annotation_item i ON i.id = j.item_id "
            f"WHERE i.study_id = %s AND {COUNTED_JUDGMENT_SQL}",
            [diverse.pk],
        )
        by_sql = {row[0] for row in cursor.fetchall()}
    by_python = {
        pk
        for pk, excluded, gold in Judgment.objects.filter(item__study=diverse).values_list(
            "pk", "excluded", "item__is_gold"
        )
        if is_counted(excluded=excluded, is_gold=gold)
    }

    assert by_orm == by_sql == by_python
    assert 0 < len(by_orm) < len(judgments)
    assert set(load_ratings_rows(diverse)["judgment"].tolist()) == by_orm
