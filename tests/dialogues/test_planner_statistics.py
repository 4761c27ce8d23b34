"""After a bulk load (an import, a study's first opening) PostgreSQL's planner statistics
of the loaded tables are refreshed once the load commits, so the first crowd is not served
by plans made for empty tables."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import Study
from dialogues.importer import import_chatanime
from tests.builders import make_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

DEMO_DATA = "dialogues/demo_data"


def analyzed(queries) -> set[str]:
    return {
        q["sql"].split()[1].strip('"')
        for q in queries.captured_queries
        if q["sql"].startswith("ANALYZE")
    }


def test_an_import_refreshes_the_statistics_of_what_it_loaded(
    postgres, django_capture_on_commit_callbacks
):
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        import_chatanime(DEMO_DATA)

    assert analyzed(queries) == {
        "dialogues_scenario",
        "dialogues_character",
        "dialogues_source",
        "dialogues_answer",
    }


def test_a_study_refreshes_the_statistics_of_its_items_when_first_opened(
    postgres, demo_dataset, django_capture_on_commit_callbacks
):
    study = make_study()
    Study.objects.filter(pk=study.pk).update(status="paused")
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        services.study_open(study=study)  # reopened: nothing loaded

    assert analyzed(queries) == set()

    fresh = services.study_create(
        name="Fresh",
        reference=study.reference_source,
        compared=list(study.compared_sources.all()),
        characters=list(study.characters.all()),
    )
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        services.study_open(study=fresh)

    assert analyzed(queries) == {
        "annotation_item",
        "annotation_itemanswer",
        "annotation_itemexposure",
    }
