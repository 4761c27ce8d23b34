"""Judge runs on the real stack: PostgreSQL (calls on several threads), Redis (the
endpoint's limits shared by processes), and `judge_study` as a process killed with
SIGKILL half-way and started again, or started twice at once."""

import os
import signal
import subprocess
import sys

import pytest

from judges.models import JudgeCall, JudgeCallStatus, JudgeRating, JudgeRun, JudgeRunStatus
from tests.builders import make_study
from tests.fixtures.services import REPO, database_url_of_test_database, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ITEMS = 20


@pytest.fixture
def environment(postgres, redis_url, monkeypatch):
    monkeypatch.setenv("COLLECTION_RETRY_BASE_SECONDS", "0.01")
    monkeypatch.setenv("COLLECTION_RETRY_MAX_SECONDS", "0.05")
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "DATABASE_URL": database_url_of_test_database(),
        "REDIS_URL": redis_url,
        "KILL_TEST_KEY": "sk-kill",
    }


def command(server, study, env, concurrency=4):
    return subprocess.Popen(
        [
            sys.executable, "manage.py", "judge_study", "--study", study.slug,
            "--base-url", server.url, "--model", "judge-7b", "--api-key-env", "KILL_TEST_KEY",
            "--items", str(ITEMS), "--both-orders",
            "--concurrency", str(concurrency), "--rate", "60000",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip


def assert_each_pair_judged_once_per_order():
    calls = JudgeCall.objects.all()
    keys = list(calls.values_list("item_id", "order"))
    assert len(keys) == len(set(keys)) == ITEMS * 2
    assert not calls.exclude(status=JudgeCallStatus.OK).exists()
    assert JudgeRating.objects.count() == ITEMS * 2 * 2 * 9
    assert JudgeRun.objects.get().status == JudgeRunStatus.FINISHED


def test_a_judge_run_killed_half_way_and_started_again_judges_each_pair_once_per_order(
    demo_dataset, environment, judge_server
):
    study = make_study(rounds=(1,))
    judge_server.delay = 0.3
    first = command(judge_server, study, environment)
    some = wait_for(lambda: JudgeCall.objects.count() >= 6, timeout=120, interval=0.05)
    assert some, first.stdout.read().decode() if first.poll() is not None else "no verdicts yet"
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert JudgeCall.objects.count() < ITEMS * 2
    # The endpoint's concurrency held across the threads of the process.
    assert 1 < judge_server.most_in_flight <= 4

    judge_server.delay = 0
    second = command(judge_server, study, environment)
    output, _ = second.communicate(timeout=300)

    assert second.returncode == 0, output.decode()
    assert f"{ITEMS * 2} verdicts" in output.decode()
    assert_each_pair_judged_once_per_order()
    assert JudgeRun.objects.get().figures["figures"]["verdicts"] == ITEMS * 2


def test_two_processes_on_the_same_run_store_each_verdict_once(
    demo_dataset, environment, judge_server
):
    study = make_study(rounds=(1,))
    judge_server.delay = 0.05
    both = [command(judge_server, study, environment, concurrency=3) for _ in range(2)]
    outputs = [process.communicate(timeout=300)[0].decode() for process in both]
    assert [p.returncode for p in both] == [0, 0], outputs
    assert_each_pair_judged_once_per_order()
    # The two processes shared the endpoint's three slots through Redis.
    assert judge_server.most_in_flight <= 3
