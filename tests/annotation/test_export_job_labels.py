"""What the results page says a prepared export file holds: the snapshot's contents, and
its size in ratings or judgments rather than "rows" of a zip."""

import pytest

from annotation.models import ExportJob, ExportStatus
from annotation.simulation import simulate_study
from tests.builders import make_study, researcher_named

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    simulate_study(study=study, annotators=3, seed=3)
    return study


def test_a_prepared_file_counts_ratings_or_judgments_and_a_snapshot_names_its_contents(
    client, study
):
    researcher = researcher_named("scientist@example.com")
    for kind, rows in (("snapshot", 1248), ("wide", 92)):
        ExportJob.objects.create(
            study=study,
            requested_by=researcher,
            kind=kind,
            status=ExportStatus.DONE,
            rows=rows,
            size=1000,
            sha256="0" * 64,
        )
    client.force_login(researcher)

    page = client.get(f"/results/{study.slug}/").content.decode()

    assert "1248 ratings," in page and "92 judgments," in page
    assert " rows," not in page
    assert "audit trail, answers, results and manifest" in page
