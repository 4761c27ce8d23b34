"""Fan writing on PostgreSQL with real workers: many writers leasing cells at once, and the
user simulator's follow-up produced by a Celery worker calling an OpenAI-compatible API."""

import threading
from collections import Counter

import pytest
from django.db import IntegrityError, connection, transaction
from django.urls import reverse

from collection.models import ModelEndpoint
from dialogues.models import Character, Scenario
from tests.builders import ROUND_1, ROUND_2, make_run, make_writer
from tests.fixtures.chat_server import SIMULATOR_MARK
from tests.fixtures.services import wait_for
from writing import services
from writing.models import FollowupMode, TaskState, WritingTask

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

WRITERS = 12


def test_many_writers_at_once_never_share_a_cell(postgres, demo_dataset):
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    scenarios = list(Scenario.objects.order_by("number")[:5])
    run = make_run([luffy], scenarios)
    writers = [make_writer(f"writer{i}@example.com", [luffy]) for i in range(WRITERS)]
    start, leased, errors = threading.Barrier(WRITERS), [], []

    def lease(writer):
        try:
            start.wait()
            task = services.task_next(user=writer)
            if task is not None:
                leased.append((writer.pk, task.pk))
        except Exception as error:  # reported by the test
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=lease, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    # Five cells, twelve writers: five leases, each cell once, each writer at most once.
    assert len(leased) == len(scenarios)
    assert max(Counter(task for _, task in leased).values()) == 1
    assert max(Counter(writer for writer, _ in leased).values()) == 1
    rows = WritingTask.objects.filter(run=run, state=TaskState.ROUND_1)
    assert sorted(rows.values_list("writer_id", "pk")) == sorted(leased)


def test_the_database_refuses_a_second_task_for_the_same_cell(postgres, demo_dataset):
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    scenario = Scenario.objects.order_by("number").first()
    run = make_run([luffy], [scenario])
    with pytest.raises(IntegrityError), transaction.atomic():
        WritingTask.objects.create(run=run, character=luffy, scenario=scenario)


def test_the_simulated_follow_up_arrives_through_a_worker(
    celery_worker, chat_server, demo_dataset, client
):
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    simulator = ModelEndpoint.objects.create(
        name="simulator", base_url=chat_server.url, model="user-sim"
    )
    run = make_run(
        [luffy],
        list(Scenario.objects.order_by("number")[:1]),
        followup_mode=FollowupMode.SIMULATOR,
        simulator=simulator,
    )
    writer = make_writer("wendy@example.com", [luffy])
    client.force_login(writer)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(run=run, writer=writer)
    response = client.post(reverse("write-task", args=[task.token]), {"answer": ROUND_1})
    assert response.status_code == 302

    ready = wait_for(
        lambda: WritingTask.objects.filter(pk=task.pk, state=TaskState.ROUND_2).first(), 60
    )
    assert ready is not None, WritingTask.objects.get(pk=task.pk).followup_error
    assert ready.question_r2.startswith("谢谢你")
    assert SIMULATOR_MARK in ready.followup_prompt and ROUND_1 in ready.followup_prompt
    # The polling fragment now tells the page to reload with the round-2 form.
    poll = client.get(reverse("write-task", args=[task.token]), headers={"HX-Request": "true"})
    assert poll["HX-Refresh"] == "true"
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert ready.question_r2 in page and ROUND_1 in page
    services.round_2_submit(user=writer, token=task.token, text=ROUND_2)
    assert WritingTask.objects.get(pk=task.pk).state == TaskState.SUBMITTED
