"""The results document's schema: what the workers store declares its version, and the
page, the API and the staff pages read every stored document through the schema, an old
one (no `schema_version`) with its missing families empty, a newer one refused clearly."""

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import StudyResults
from annotation.results.schema import (
    SCHEMA_VERSION,
    ResultsDocument,
    ResultsSchemaError,
    read_annotators,
    read_document,
)
from annotation.selectors import annotator_rows, results_view
from annotation.simulation import simulate_study
from tests.builders import approved_annotator, make_study, researcher_named

FAMILIES = set(ResultsDocument.__annotations__)


def test_an_old_document_without_a_version_reads_as_version_0_with_empty_families():
    old = {"study": "s", "judgments": 3, "leaderboard": {"human": {}}}

    document = read_document(old)

    assert document["schema_version"] == 0
    assert set(document) == FAMILIES
    assert document["leaderboard"] == {"human": {}}
    assert document["statistics"] == {} and document["preferences"] == {}
    assert document["metrics"] == [] and document["seconds"] == 0.0
    assert document["bradley_terry_note"] == ""


def test_a_newer_document_is_refused_with_a_message_that_says_what_to_do():
    with pytest.raises(
        ResultsSchemaError, match=rf"version {SCHEMA_VERSION + 98} is newer .*recompute"
    ):
        read_document({"schema_version": SCHEMA_VERSION + 98})


@pytest.mark.parametrize(
    "payload",
    [None, [], "text", {"schema_version": "1"}, {"schema_version": -1}, {"leaderboard": []}],
)
def test_what_is_no_results_document_is_refused(payload):
    with pytest.raises(ResultsSchemaError):
        read_document(payload)


def test_the_annotators_part_is_read_alone_with_the_same_version_rule():
    assert read_annotators(None, None) == {}
    assert read_annotators(1, {"x": {"judgments": 1}}) == {"x": {"judgments": 1}}
    with pytest.raises(ResultsSchemaError):
        read_annotators(SCHEMA_VERSION + 1, {})


@pytest.fixture
def computed(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), include_diversity=True, characters=[luffy])
    simulate_study(study=study, annotators=3, seed=2)
    return services.study_recompute(study=study)


@pytest.mark.django_db
def test_a_stored_document_declares_the_current_version_and_has_every_family(computed):
    assert computed.payload["schema_version"] == SCHEMA_VERSION
    assert set(computed.payload) == FAMILIES
    assert read_document(computed.payload) == computed.payload


@pytest.mark.django_db
def test_a_document_from_the_future_shows_no_results_and_the_api_says_why(client, computed, luffy):
    StudyResults.objects.filter(pk=computed.pk).update(
        payload={**computed.payload, "schema_version": SCHEMA_VERSION + 1}
    )
    study = computed.study
    researcher = researcher_named("scientist@example.com")
    client.force_login(researcher)

    assert results_view(study) is None
    assert 'data-testid="no-results"' in client.get(f"/results/{study.slug}/").content.decode()
    response = client.get(f"/api/v1/studies/{study.slug}/results/")
    assert response.status_code == 409
    assert "newer than this software reads" in response.json()["detail"]


@pytest.mark.django_db
def test_staff_pages_skip_an_unreadable_document_and_read_the_others(demo_dataset, luffy):
    alice = approved_annotator("alice@example.com", [luffy])
    pseudonym = alice.annotator_profile.pseudonym
    for version, distance in ((None, 1.0), (SCHEMA_VERSION + 1, 3.0)):
        StudyResults.objects.create(
            study=make_study(),
            computed_at=timezone.now(),
            judgments=1,
            seconds=0.1,
            payload={
                "schema_version": version,
                "annotators": {pseudonym: {"mean_distance": distance, "units_compared": 10}},
            },
        )

    (row,) = annotator_rows([alice.annotator_profile])

    assert row.mean_distance == pytest.approx(1.0)
