"""Judge runs in the researchers' REST API: configuration, status and the stored figures
beside the humans; researchers only; never the endpoint's key or address."""

import pytest
from django.utils import timezone

from collection.models import ModelEndpoint
from judges.models import JudgeRun, JudgeRunStatus
from tests.builders import approved_annotator, make_study, researcher_named


@pytest.fixture
def run(demo_dataset, luffy):
    study = make_study(characters=[luffy])
    endpoint = ModelEndpoint.objects.create(
        name="local judge",
        base_url="http://10.0.0.7:8000/v1",
        model="judge-model",
        api_key_env="SECRET_JUDGE_KEY",
    )
    return JudgeRun.objects.create(
        study=study,
        endpoint=endpoint,
        model="judge-model",
        temperature=0.0,
        language="zh",
        prompt_version="judge-prompt/1",
        rubric_version="abc123",
        system_prompt="你是评审",
        status=JudgeRunStatus.FINISHED,
        finished_at=timezone.now(),
        figures={"headline": {"agreement": 0.61}},
        figures_computed_at=timezone.now(),
    )


pytestmark = pytest.mark.django_db


def test_a_researcher_reads_a_runs_configuration_and_figures(client, run):
    client.force_login(researcher_named("rita@example.com"))

    listed = client.get("/api/v1/judge-runs/").json()
    found = client.get(f"/api/v1/judge-runs/{run.pk}/").json()

    assert [r["id"] for r in listed["results"]] == [run.pk]
    assert found["study"] == run.study.slug and found["model"] == "judge-model"
    assert found["status"] == "finished" and found["language"] == "zh"
    assert found["figures"] == {"headline": {"agreement": 0.61}}
    text = str(found)
    assert "SECRET_JUDGE_KEY" not in text and "10.0.0.7" not in text and "评审" not in text


def test_runs_are_filtered_by_study_and_status(client, run):
    client.force_login(researcher_named("rita@example.com"))

    assert client.get("/api/v1/judge-runs/", {"study": run.study.slug}).json()["count"] == 1
    assert client.get("/api/v1/judge-runs/", {"study": "no-such-study"}).status_code == 400
    assert client.get("/api/v1/judge-runs/", {"status": "running"}).json()["count"] == 0
    assert client.get("/api/v1/judge-runs/", {"status": "sideways"}).status_code == 400


def test_the_api_front_page_lists_judge_runs(client, run):
    client.force_login(researcher_named("rita@example.com"))

    assert "judge-runs" in client.get("/api/v1/", headers={"Accept": "application/json"}).json()


def test_annotators_and_visitors_are_refused(client, run, luffy):
    assert client.get("/api/v1/judge-runs/").status_code in (401, 403)
    client.force_login(approved_annotator("ann@example.com", [luffy]))
    assert client.get("/api/v1/judge-runs/").status_code == 403
    assert client.get(f"/api/v1/judge-runs/{run.pk}/").status_code == 403
