"""Staff pages of answer collection: who may see them, starting a run from the browser,
pause / resume / cancel, and reviewing flagged answers. Tasks run in-process here; the
integration tests run them on a real worker."""

import re

import pytest
from django.urls import reverse

from collection.models import (
    AnswerEdit,
    CollectionRun,
    GeneratedAnswer,
    ModelEndpoint,
    ReviewStatus,
    RunStatus,
)
from dialogues.importer import import_chatanime
from dialogues.models import Answer, Character, Scenario, Source
from tests.builders import UserFactory, researcher_named, study_manager_named
from tests.fixtures.data import small_source, write_source

pytestmark = pytest.mark.django_db(transaction=True)

LUFFY = "《海贼王》的蒙奇·D·路飞"


@pytest.fixture(autouse=True)
def _quick_retries(settings):
    settings.COLLECTION_RETRY_BASE_SECONDS = 0.01
    settings.COLLECTION_RETRY_MAX_SECONDS = 0.05
    settings.COLLECTION_RETRY_ATTEMPTS = 2


@pytest.fixture
def world(tmp_path, chat_server, monkeypatch):
    write_source(tmp_path, "human", small_source())
    import_chatanime(tmp_path)
    monkeypatch.setenv("STAFF_TEST_KEY", "sk-staff-secret")
    endpoint = ModelEndpoint.objects.create(
        name="Model under test",
        source_slug="new-model",
        base_url=chat_server.url,
        model="secret-model-name",
        api_key_env="STAFF_TEST_KEY",
    )
    simulator = ModelEndpoint.objects.create(
        name="Simulator", base_url=chat_server.url, model="sim", api_key_env="STAFF_TEST_KEY"
    )
    manager = study_manager_named("manager@example.com")
    researcher = researcher_named("researcher@example.com")
    return {
        "researcher": researcher,
        "endpoint": endpoint,
        "simulator": simulator,
        "admin": UserFactory(email="admin@example.com", is_staff=True),
        "manager": manager,
        "annotator": UserFactory(email="fan@example.com"),
        "server": chat_server,
    }


def start(client, world, **overrides):
    form = {
        "endpoint": world["endpoint"].pk,
        "simulator": world["simulator"].pk,
        "characters": [Character.objects.get(key=LUFFY).pk],
        "scenarios": "1-2",
        "rounds": "1,2",
        **overrides,
    }
    return client.post(reverse("collection-runs"), form)


@pytest.mark.parametrize("visitor", ["anonymous", "annotator", "researcher", "manager"])
def test_only_admins_reach_the_collection_pages(client, world, visitor):
    if visitor != "anonymous":
        client.force_login(world[visitor])

    listing = client.get(reverse("collection-runs"))
    posted = start(client, world)
    run = CollectionRun.objects.create(
        source=Source.objects.get(slug="human"),
        endpoint=world["endpoint"],
        simulator_endpoint=world["simulator"],
        simulator_prompt="",
        status=RunStatus.PAUSED,
    )
    page = client.get(reverse("collection-run", args=[run.pk]))
    control = client.post(reverse("collection-run-control", args=[run.pk]), {"action": "resume"})

    expected = 302 if visitor == "anonymous" else 403
    for response in (listing, posted, page, control):
        assert response.status_code == expected
    assert CollectionRun.objects.get().status == RunStatus.PAUSED
    assert world["server"].requests == []


def test_without_an_endpoint_the_page_says_where_to_add_one(client, world):
    client.force_login(world["admin"])
    assert 'data-testid="start-run"' in client.get(reverse("collection-runs")).content.decode()
    ModelEndpoint.objects.all().delete()
    page = client.get(reverse("collection-runs")).content.decode()
    assert 'data-testid="no-endpoints"' in page
    assert reverse("admin:collection_modelendpoint_add") in page
    assert 'data-testid="start-run"' not in page


def test_an_admin_starts_a_run_and_watches_it_finish(client, world):
    client.force_login(world["admin"])

    response = start(client, world)

    run = CollectionRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("collection-run", args=[run.pk])
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    assert Answer.objects.filter(source__slug="new-model").count() == 4
    page = client.get(response.url).content.decode()
    assert "4 / 4 (100%)" in page
    assert "sk-staff-secret" not in page
    # Nothing left to control: no card of run controls, not even an empty one.
    assert reverse("collection-run-control", args=[run.pk]) not in page


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"scenarios": "0-70"}, "outside 1-60"),
        ({"rounds": "7"}, "rounds must be"),
        ({"characters": ["999999"]}, "Choose known characters"),
        ({"endpoint": "x"}, "Choose an endpoint"),
        ({"characters": ["x"]}, "Choose known characters"),
        ({"characters": []}, "Choose known characters"),
        ({"scenarios": "3-5"}, "not in the database"),
    ],
)
def test_a_bad_start_form_is_refused_and_creates_nothing(client, world, overrides, message):
    client.force_login(world["admin"])

    response = start(client, world, **overrides)

    # Refused posts answer 422 in every app (common.forms.REFUSED).
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not CollectionRun.objects.exists()
    assert world["server"].requests == []


def test_a_refused_start_form_keeps_every_choice_and_speaks_the_pages_language(client, world):
    """Reset to the first endpoint and every character, a corrected form would start a
    run nobody chose."""
    client.force_login(world["admin"])
    client.cookies["django_language"] = "zh-hans"
    luffy = Character.objects.get(key=LUFFY)
    endpoint, simulator = world["endpoint"], world["simulator"]

    # The simulator is not the first endpoint (the menu's default), the endpoint is.
    assert list(ModelEndpoint.objects.order_by("name")) == [endpoint, simulator]

    page = start(client, world, scenarios="3-5").content.decode()

    answers, simulators = page.split('id="simulator"')
    assert re.search(rf'<option value="{endpoint.pk}" selected>', answers)
    assert re.search(rf'<option value="{simulator.pk}" selected>', simulators)
    checked = re.findall(r'name="characters" value="(\d+)" checked', page)
    assert checked == [str(luffy.pk)] and Character.objects.count() > 1
    assert "不在数据库中" in page and "are not in the database" not in page
    assert not CollectionRun.objects.exists()


def test_a_missing_key_is_refused_before_anything_is_created(client, world, monkeypatch):
    monkeypatch.delenv("STAFF_TEST_KEY")
    client.force_login(world["admin"])

    response = start(client, world)

    assert response.status_code == 422
    assert "STAFF_TEST_KEY is not set" in response.content.decode()
    assert not CollectionRun.objects.exists()


def test_a_missing_key_is_explained_in_chinese_on_the_page(client, world, monkeypatch, settings):
    monkeypatch.delenv("STAFF_TEST_KEY")
    settings.LANGUAGE_CODE = "zh-hans"
    client.force_login(world["admin"])

    page = start(client, world).content.decode()

    assert "环境变量 STAFF_TEST_KEY 未设置" in page
    assert "必须在运行网站服务器和后台进程的环境中设置它" in page
    assert "is not set" not in page
    assert not CollectionRun.objects.exists()


def test_pause_resume_and_cancel(client, world):
    client.force_login(world["admin"])
    world["server"].known_models = {"sim"}  # the responder's model is unknown: run fails
    start(client, world)
    run = CollectionRun.objects.get()
    assert run.status == RunStatus.FAILED
    page = client.get(reverse("collection-run", args=[run.pk])).content.decode()
    assert "does not exist" in page

    world["server"].known_models = None
    control = reverse("collection-run-control", args=[run.pk])
    client.post(control, {"action": "resume"})
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED  # resumed, the in-process tasks filled it

    response = client.post(control, {"action": "pause"})
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and response.status_code == 302

    run.status = RunStatus.RUNNING
    run.save()
    client.post(control, {"action": "pause"})
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED
    client.post(control, {"action": "cancel"})
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_an_admin_edits_a_flagged_answer_and_the_edit_is_audited(client, world):
    client.force_login(world["admin"])
    world["server"].script("english")
    start(client, world, scenarios="1", rounds="1")
    flagged = GeneratedAnswer.objects.get(review_status=ReviewStatus.FLAGGED)
    run_page = client.get(reverse("collection-run", args=[flagged.run_id])).content.decode()
    assert "not written in Chinese" in run_page

    client.post(
        reverse("collection-answer-review", args=[flagged.pk]),
        {"action": "edit", "text": "别担心！"},
    )

    flagged.refresh_from_db()
    assert flagged.review_status == ReviewStatus.ACCEPTED
    assert Answer.objects.get(source__slug="new-model").text == "别担心！"
    assert AnswerEdit.objects.filter(action="edit", editor=world["admin"]).exists()


def test_an_empty_edit_is_refused_and_changes_nothing(client, world):
    client.force_login(world["admin"])
    world["server"].script("empty")
    start(client, world, scenarios="1", rounds="1")
    flagged = GeneratedAnswer.objects.get(review_status=ReviewStatus.FLAGGED)

    client.post(
        reverse("collection-answer-review", args=[flagged.pk]), {"action": "edit", "text": "  "}
    )

    flagged.refresh_from_db()
    assert flagged.review_status == ReviewStatus.FLAGGED
    assert not Answer.objects.filter(source__slug="new-model").exists()
    assert not AnswerEdit.objects.exists()


def test_the_new_run_form_offers_the_scenarios_the_database_holds(client, world):
    Scenario.objects.create(
        number=16, question="考研没考上，好难过。", persona_group="office_worker"
    )
    client.force_login(world["admin"])

    page = client.get(reverse("collection-runs")).content.decode()

    assert 'name="scenarios" value="1-2,16"' in page


def test_a_run_started_while_the_broker_is_down_is_sent_again_by_the_beat(
    client, world, monkeypatch, caplog
):
    from datetime import timedelta

    from celery import current_app
    from kombu.exceptions import OperationalError

    from collection.tasks import collection_runs_catch_up

    task = current_app.tasks["collection.tasks.collection_run_enqueue"]
    send = task.apply_async
    broker = {"up": False}

    def apply_async(*args, **kwargs):
        if not broker["up"]:
            raise OperationalError("Error 111 connecting to redis. Connection refused.")
        return send(*args, **kwargs)

    monkeypatch.setattr(task, "apply_async", apply_async)
    client.force_login(world["admin"])

    response = start(client, world)

    run = CollectionRun.objects.get()
    assert response.status_code == 302 and run.status == RunStatus.RUNNING
    assert "could not enqueue collection.tasks.collection_run_enqueue" in caplog.text
    assert world["server"].requests == []
    broker["up"] = True
    assert collection_runs_catch_up() == []  # just started: not stalled yet
    CollectionRun.objects.filter(pk=run.pk).update(
        created_at=run.created_at - timedelta(minutes=11)
    )

    assert collection_runs_catch_up() == [run.pk]

    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    assert Answer.objects.filter(source__slug="new-model").count() == 4
    assert collection_runs_catch_up() == []


def test_collection_actions_are_in_the_audit_trail_for_managers_to_read(client, world):
    from annotation.models import AuditEvent

    client.force_login(world["admin"])
    world["server"].script("english")
    start(client, world, scenarios="1", rounds="1")
    run = CollectionRun.objects.get()
    flagged = GeneratedAnswer.objects.get(review_status=ReviewStatus.FLAGGED)
    client.post(
        reverse("collection-answer-review", args=[flagged.pk]),
        {"action": "edit", "text": "别担心！"},
    )
    run.status = RunStatus.RUNNING
    run.save()
    control = reverse("collection-run-control", args=[run.pk])
    client.post(control, {"action": "pause"})
    client.post(control, {"action": "cancel"})
    client.post(control, {"action": "resume"})  # refused: a cancelled run stays cancelled

    actions = list(AuditEvent.objects.order_by("at", "pk").values_list("action", "actor"))
    admin = world["admin"].pk
    assert actions == [
        ("collection.run_start", admin),
        ("collection.edit", admin),
        ("collection.accept", admin),
        ("collection.run_pause", admin),
        ("collection.run_cancel", admin),
    ]
    edit = AuditEvent.objects.get(action="collection.edit")
    assert edit.after == {"text": "别担心！"} and edit.before["text"]
    # Which characters and scenarios the run was started on, not how many of each.
    started = AuditEvent.objects.get(action="collection.run_start")
    luffy = Character.objects.get(key=LUFFY)
    assert started.after["characters"] == [luffy.pk] and started.after["scenarios"] == [1]

    client.force_login(world["manager"])
    html = client.get("/staff/audit/").content.decode()
    for name in ("Collection run started", "Model answer edited", "Collection run cancelled"):
        assert name in html
    assert "collection.edit</td>" not in html
    assert re.search(rf"<code>characters</code>\s*{luffy.name_zh} · Monkey D. Luffy<", html)


def test_a_flagged_reply_is_reviewed_beside_what_it_replies_to(client, world):
    """A round-2 answer answers the simulated user's follow-up to the round-1 answer: the
    reviewer sees the scenario, that answer and the follow-up, and no button is the
    default for accepting a flagged answer as it is."""
    from django.utils.html import escape

    client.force_login(world["admin"])
    world["server"].script("english", "ok", "as_an_ai")
    start(client, world, scenarios="1", rounds="1,2")
    run = CollectionRun.objects.get()
    second = GeneratedAnswer.objects.get(round=2)
    first = GeneratedAnswer.objects.get(round=1)
    assert second.review_status == ReviewStatus.FLAGGED

    page = client.get(reverse("collection-run", args=[run.pk])).content.decode()

    [shown] = re.findall(rf'data-testid="conversation-{second.pk}">(.*?)</dl>', page, re.S)
    assert second.scenario.question in shown
    assert escape(first.text) in shown and escape(second.question) in shown
    assert 'value="accept" class="primary"' not in page


def test_regenerating_says_what_happens_next(client, world):
    client.force_login(world["admin"])
    world["server"].script("english")
    start(client, world, scenarios="1", rounds="1")
    flagged = GeneratedAnswer.objects.get(review_status=ReviewStatus.FLAGGED)
    world["server"].script("english")  # flagged again

    page = client.post(
        reverse("collection-answer-review", args=[flagged.pk]),
        {"action": "regenerate"},
        follow=True,
    ).content.decode()

    assert "Asked the model again" in page and "Review saved." not in page
    again = GeneratedAnswer.objects.get()
    assert again.pk != flagged.pk and again.review_status == ReviewStatus.FLAGGED
