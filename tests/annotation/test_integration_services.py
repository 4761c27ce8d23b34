"""The foundation on real services: PostgreSQL, Redis and a Celery worker process."""

import os
import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import ItemExposure, Study, WorkerHeartbeat
from annotation.tasks import record_worker_heartbeat
from dialogues.models import Answer, Character, Scenario, Source
from tests.fixtures.data import REAL_DATA, write_source
from tests.fixtures.services import require_service, wait_for
from tests.helpers import pair_submission

pytestmark = pytest.mark.integration


@pytest.fixture
def real_data():
    if not REAL_DATA.is_dir():
        require_service(f"the published ChatAnime data is not at {REAL_DATA}")
    return REAL_DATA


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_tasks_from_redis_against_postgresql(celery_worker):
    record_worker_heartbeat.delay()

    heartbeat = wait_for(lambda: WorkerHeartbeat.objects.first(), timeout=30)

    assert heartbeat is not None, "the worker never wrote its heartbeat"
    # Written by the worker process, not run in-process by this test.
    assert heartbeat.hostname == celery_worker.hostname


@pytest.mark.django_db(transaction=True)
def test_the_health_check_sees_the_broker_and_the_worker(celery_worker, client):
    record_worker_heartbeat.delay()
    wait_for(lambda: WorkerHeartbeat.objects.exists(), timeout=30)

    body = client.get("/health/").json()

    assert body["database"] == "ok"
    assert body["broker"] == "ok"
    assert body["worker_seen_seconds_ago"] is not None


@pytest.mark.django_db
def test_the_published_dataset_imports_into_postgresql(postgres, real_data):
    out = StringIO()
    call_command("import_chatanime", str(REAL_DATA), stdout=out)

    assert Source.objects.count() == 11
    assert Character.objects.count() == 20
    assert Scenario.objects.count() == 60
    assert Answer.objects.count() == 26_400

    call_command("import_chatanime", str(REAL_DATA), stdout=out)
    assert "Nothing changed" in out.getvalue()


@pytest.mark.django_db
def test_a_broken_file_beside_the_published_data_writes_nothing_to_postgresql(
    postgres, real_data, tmp_path
):
    for file in REAL_DATA.glob("*.json"):
        (tmp_path / file.name).write_bytes(file.read_bytes())
    write_source(tmp_path, "zzz-broken", {"《海贼王》的路飞": [{"dialog_id": 3}]})

    with pytest.raises(CommandError):
        call_command("import_chatanime", str(tmp_path), stdout=StringIO(), stderr=StringIO())

    assert Answer.objects.count() == 0
    assert Source.objects.count() == 0


def test_the_published_dataset_imports_into_the_embedded_sqlite(real_data, tmp_path):
    """`make run DATA=…` uses SQLite; prove the whole dataset goes in there too."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'run.sqlite3'}",
    }
    env.pop("REDIS_URL", None)

    def manage(*args):
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert manage("migrate", "--noinput").returncode == 0
    result = manage("import_chatanime", str(REAL_DATA))

    assert result.returncode == 0, result.stderr
    assert "26400 created" in result.stdout


@pytest.mark.django_db
def test_the_full_published_study_has_24000_pairs(postgres, real_data):
    call_command("import_chatanime", str(real_data), stdout=StringIO())
    out = StringIO()

    call_command("create_study", "--name", "ChatAnime full", "--open", stdout=out)

    study = Study.objects.get(slug=out.getvalue().strip().splitlines()[-1])
    assert study.items.filter(kind="pair").count() == 24_000
    assert ItemExposure.objects.filter(item__study=study).count() == 12_000 * 2 + 12_000 * 4
    assert "60 / 0" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_updates_the_leaderboard_after_a_submission(
    celery_worker, demo_dataset, luffy
):
    from annotation import services
    from annotation.models import StudyResults
    from tests.builders import approved_annotator, lease_pair, make_study

    study = make_study(characters=[luffy])
    annotator = approved_annotator("live@example.com", [luffy])
    lease = lease_pair(annotator)

    services.judgment_submit(user=annotator, token=lease.token, submission=pair_submission())

    results = wait_for(
        lambda: StudyResults.objects.filter(study=study, judgments=1).first(), timeout=60
    )
    assert results is not None, "the worker never refreshed the results"
    assert results.payload["leaderboard"]["human"]["fluency"]["n"] == 1
