"""What a filtered results page says about itself: which figures the filters narrow (the
rest stay the whole study's) and which column orders the leaderboard."""

import pytest

from annotation import services
from annotation.selectors import results_view
from annotation.simulation import simulate_study
from dialogues.models import Character
from tests.builders import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(demo_dataset, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), characters=list(Character.objects.all()[:2]))
    simulate_study(study=study, annotators=4, seed=5)
    services.results_refresh(study=study)
    return study


def test_a_character_filter_says_the_sections_below_are_the_whole_studys(client, study, researcher):
    # The preferences, paired differences, diversity and annotators are not narrowed by
    # the filters; without a word they read as the character's.
    client.force_login(researcher)
    character = study.characters.first()

    whole = client.get(f"/results/{study.slug}/").content.decode()
    filtered = client.get(f"/results/{study.slug}/", {"character": character.pk}).content.decode()

    assert 'data-testid="whole-study"' not in whole
    assert filtered.count('data-testid="whole-study"') == 3
    assert "the character and round filters narrow only the leaderboard" in filtered


def means(view, key):
    column = [k for k, _label in view.columns].index(key)
    return [cells[column].mean for _slug, _name, _kind, cells in view.rows]


@pytest.mark.parametrize("dimension", ["basic", "role_playing", "emotional_support"])
def test_the_leaderboard_is_ranked_by_the_dimension_it_shows(study, dimension):
    view = results_view(study, dimension=dimension)

    shown = means(view, f"dimension:{dimension}")

    assert shown == sorted(shown, reverse=True)
    assert view.sorted_by == {"basic": "Basic dialogue", "role_playing": "Role-playing"}.get(
        dimension, "Emotional support"
    )


def test_the_page_says_what_orders_the_leaderboard(client, study, researcher):
    client.force_login(researcher)

    page = client.get(f"/results/{study.slug}/", {"dimension": "basic"}).content.decode()

    assert "Sorted by the mean of Basic dialogue; ★ marks human fans" in page


def test_the_character_filter_names_each_character_in_both_languages(client, study, researcher):
    # Chinese names alone left a reader without Chinese guessing which character is which.
    client.force_login(researcher)

    page = client.get(f"/results/{study.slug}/").content.decode()

    for character in study.characters.all():
        assert f">{character.name_zh} · {character.name_en}</option>" in page
