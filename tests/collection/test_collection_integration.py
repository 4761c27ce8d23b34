"""Collection on the real stack: PostgreSQL, Redis, a Celery worker process, and the
`collect_answers` command as a process killed with SIGKILL half-way and started again."""

import os
import signal
import subprocess
import sys

import pytest

from collection import services
from collection.models import (
    CollectionRun,
    GeneratedAnswer,
    ModelEndpoint,
    RunStatus,
    SimulatedFollowup,
)
from dialogues.importer import import_chatanime
from dialogues.models import Answer, Character, Scenario
from tests.fixtures.data import small_source, write_source
from tests.fixtures.services import REPO, database_url_of_test_database, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def fast_retries_everywhere(monkeypatch, settings):
    """For this process and for the processes the test starts."""
    monkeypatch.setenv("COLLECTION_RETRY_BASE_SECONDS", "0.01")
    monkeypatch.setenv("COLLECTION_RETRY_MAX_SECONDS", "0.05")
    settings.COLLECTION_RETRY_BASE_SECONDS = 0.01
    settings.COLLECTION_RETRY_MAX_SECONDS = 0.05


@pytest.fixture
def imported(tmp_path):
    directory = tmp_path / "import"
    directory.mkdir()
    write_source(directory, "human", small_source())
    import_chatanime(directory)


def assert_each_answer_exactly_once(source_slug: str, cells: int):
    generated = GeneratedAnswer.objects.filter(source__slug=source_slug)
    keys = list(generated.values_list("character_id", "scenario_id", "round"))
    assert len(keys) == len(set(keys)) == cells * 2
    assert Answer.objects.filter(source__slug=source_slug).count() == cells * 2
    assert SimulatedFollowup.objects.filter(source__slug=source_slug).count() == cells
    for answer in generated.filter(round=2):
        followup = SimulatedFollowup.objects.get(
            source=answer.source, character=answer.character, scenario=answer.scenario
        )
        assert answer.question == followup.text


def test_a_run_started_by_staff_is_collected_by_a_celery_worker(
    fast_retries_everywhere, imported, postgres, redis_url, chat_server, tmp_path, celery_worker
):
    key_file = tmp_path / "key"
    key_file.write_text("sk-from-a-secret-file\n")
    chat_server.api_key = "sk-from-a-secret-file"
    endpoint = ModelEndpoint.objects.create(
        name="worker model",
        source_slug="worker-model",
        base_url=chat_server.url,
        model="m",
        api_key_file=str(key_file),
        concurrency=2,
    )
    chat_server.script("server_error", ("rate_limited", 0))
    run = services.run_start(
        source_slug="worker-model",
        endpoint=endpoint,
        simulator_endpoint=endpoint,
        characters=list(Character.objects.all()),
        scenarios=list(Scenario.objects.all()),
        rounds=[1, 2],
    )

    services.run_enqueue(run=run)

    finished = wait_for(
        lambda: CollectionRun.objects.get(pk=run.pk).status == RunStatus.FINISHED, timeout=120
    )
    if not finished:
        celery_worker.terminate()
        pytest.fail(f"the run did not finish:\n{celery_worker.communicate(timeout=30)[0][-5000:]}")
    assert_each_answer_exactly_once("worker-model", cells=4)
    # A redelivered cell task costs nothing: every answer is there.
    requests_before = len(chat_server.requests)
    from collection.tasks import collection_cell_collect

    collection_cell_collect.delay(run.pk, Character.objects.first().pk, Scenario.objects.first().pk)
    services.run_enqueue(run=run)
    wait_for(lambda: False, timeout=2)
    assert len(chat_server.requests) == requests_before


def command(server, env):
    return subprocess.Popen(
        [
            sys.executable, "manage.py", "collect_answers",
            "--source", "killed-model",
            "--base-url", server.url, "--model", "m", "--api-key-env", "KILL_TEST_KEY",
            "--simulator-base-url", server.url, "--simulator-model", "sim",
            "--simulator-api-key-env", "KILL_TEST_KEY",
            "--scenarios", "1-2", "--concurrency", "2", "--rate", "6000",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip


def test_a_command_killed_half_way_and_started_again_collects_each_answer_once(
    fast_retries_everywhere, imported, postgres, redis_url, chat_server
):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "DATABASE_URL": database_url_of_test_database(),
        "REDIS_URL": redis_url,
        "KILL_TEST_KEY": "sk-kill",
    }
    chat_server.delay = 0.3
    first = command(chat_server, env)
    some = wait_for(
        lambda: GeneratedAnswer.objects.filter(source__slug="killed-model").count() >= 3,
        timeout=120,
        interval=0.05,
    )
    assert some, first.stdout.read().decode() if first.poll() is not None else "no answers yet"
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    collected_before_kill = GeneratedAnswer.objects.filter(source__slug="killed-model").count()
    assert collected_before_kill < 8

    chat_server.delay = 0
    second = command(chat_server, env)
    output, _ = second.communicate(timeout=300)

    assert second.returncode == 0, output.decode()
    assert "Every requested answer exists" in output.decode()
    assert_each_answer_exactly_once("killed-model", cells=4)
    assert CollectionRun.objects.get().status == RunStatus.FINISHED
