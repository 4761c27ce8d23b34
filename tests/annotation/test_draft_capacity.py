"""How many annotators a study needs, said before it is opened: `create_study` prints it
and the members page shows it for a draft, and a manager recruits by it. Diversity sets
raise the need; they are drawn (seeded by the study) when the study opens, and the draft's
figure already counts the sets opening will make."""

import pytest
from django.core.management import call_command

from annotation import services
from annotation.diversity import diversity_sets
from annotation.models import ItemAnswer, ItemKind
from annotation.selectors import study_answers, study_capacity
from dialogues.models import Character, Source, SourceKind

pytestmark = pytest.mark.django_db


def draft(**design):
    return services.study_create(
        name="Draft",
        reference=Source.objects.get(kind=SourceKind.HUMAN),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
        include_diversity=True,
        **design,
    )


@pytest.mark.parametrize(
    "design", [{"overlap": 2, "rounds": [1]}, {"overlap": 3, "rounds": [1, 2]}]
)
def test_a_draft_needs_as_many_annotators_as_the_opened_study(demo_dataset, design):
    study = draft(**design)

    before = {row.character.pk: row.needed for row in study_capacity(study)}
    services.study_open(study=study)
    after = {row.character.pk: row.needed for row in study_capacity(study)}

    assert before == after


def test_the_draft_counts_the_sets_it_will_have(demo_dataset):
    # Overlap 2 over round 1: 6 annotators would do for the pairs alone; the sets make 8.
    study = draft(overlap=2, rounds=[1])

    assert {row.needed for row in study_capacity(study)} == {8}


def test_create_study_prints_the_need_with_the_sets(demo_dataset, capsys):
    call_command(
        "create_study", "--name", "Drafted", "--rounds", "1", "--overlap", "2", "--diversity"
    )

    out = capsys.readouterr().out
    assert out.count(": 8 / 0  short by 8") == Character.objects.count()


def test_opening_makes_the_sets_that_were_foreseen(demo_dataset):
    study = draft(overlap=3, rounds=[1, 2])
    rows = study_answers(study).values_list(
        "character_id", "scenario_id", "round", "source_id", "pk"
    )
    foreseen = {
        (character_id, source_id, frozenset(chosen))
        for character_id, source_id, chosen in diversity_sets(
            study.pk, list(rows), study.diversity_set_size
        )
    }

    services.study_open(study=study)

    made: dict[int, set] = {}
    for item_id, answer_id in ItemAnswer.objects.filter(
        item__study=study, item__kind=ItemKind.DIVERSITY
    ).values_list("item_id", "answer_id"):
        made.setdefault(item_id, set()).add(answer_id)
    sets = study.items.filter(kind=ItemKind.DIVERSITY).values_list(
        "pk", "character_id", "diversity_source_id"
    )
    assert {(c, s, frozenset(made[pk])) for pk, c, s in sets} == foreseen
    assert len(foreseen) == Character.objects.count() * Source.objects.count()
