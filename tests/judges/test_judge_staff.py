"""The judges' staff page: who may reach it, starting a run from the browser (its calls
run in-process here, as the workers run them), and a refused start changing nothing."""

import pytest
from django.urls import reverse

from annotation.models import Judgment
from collection.models import ModelEndpoint
from dialogues.models import Source
from judges.models import JudgeCall, JudgeRun, JudgeRunStatus
from tests.builders import UserFactory, make_study, researcher_named, study_manager_named

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(demo_dataset, judge_server, monkeypatch):
    monkeypatch.setenv("STAFF_JUDGE_KEY", "sk-staff-judge-secret")
    endpoint = ModelEndpoint.objects.create(
        name="Judge under test",
        base_url=judge_server.url,
        model="judge-7b",
        temperature=0,
        api_key_env="STAFF_JUDGE_KEY",
        rate_per_minute=100000,
    )
    return {
        "study": make_study(rounds=(1,)),
        "endpoint": endpoint,
        "admin": UserFactory(email="admin@example.com", is_staff=True),
        "manager": study_manager_named("manager@example.com"),
        "researcher": researcher_named("researcher@example.com"),
        "annotator": UserFactory(email="fan@example.com"),
        "server": judge_server,
    }


def start(client, world, **overrides):
    form = {
        "study": world["study"].pk,
        "endpoint": world["endpoint"].pk,
        "language": "zh",
        "items": "6",
        "both_orders": "on",
        **overrides,
    }
    return client.post(reverse("judge-runs"), form)


@pytest.mark.parametrize("visitor", ["anonymous", "annotator", "researcher", "manager"])
def test_only_admins_reach_the_judges_page(client, world, visitor):
    if visitor != "anonymous":
        client.force_login(world[visitor])
    expected = 302 if visitor == "anonymous" else 403
    assert client.get(reverse("judge-runs")).status_code == expected
    assert start(client, world).status_code == expected
    assert not JudgeRun.objects.exists() and world["server"].requests == []


def test_the_start_form_comes_empty_where_nothing_was_chosen(client, world):
    client.force_login(world["admin"])
    page = client.get(reverse("judge-runs")).content.decode()
    assert '<input id="items" name="items" inputmode="numeric" value="">' in page
    assert "dict_items" not in page


def test_without_an_endpoint_the_page_says_where_to_add_one(client, world):
    ModelEndpoint.objects.all().delete()
    client.force_login(world["admin"])
    page = client.get(reverse("judge-runs")).content.decode()
    assert 'data-testid="no-endpoints"' in page
    assert reverse("admin:collection_modelendpoint_add") in page
    assert 'data-testid="start-judge-run"' not in page
    client.cookies["django_language"] = "zh-hans"
    assert "还没有模型端点" in client.get(reverse("judge-runs")).content.decode()


def test_with_an_endpoint_the_start_form_is_shown(client, world):
    client.force_login(world["admin"])
    page = client.get(reverse("judge-runs")).content.decode()
    assert 'data-testid="start-judge-run"' in page and 'data-testid="no-endpoints"' not in page


def test_without_a_broker_the_run_goes_on_beside_the_page_not_inside_it(
    client, world, settings, monkeypatch
):
    """`make run` (no Redis, tasks in-process): starting a run gives the page back at once
    and a background thread calls the judge, as a worker would."""
    import threading

    from common import background

    settings.CHATANIME_TASKS_IN_BACKGROUND = True
    monkeypatch.setattr(background, "_long_work", {})
    answer = threading.Event()

    def held(request):
        # The judge answers only once the test has seen the page come back (or after 5 s:
        # a run inside the request then finishes before the page, and the test fails).
        answer.wait(timeout=5)
        return None

    monkeypatch.setattr(world["server"], "refusal", held)
    client.force_login(world["admin"])

    response = start(client, world, items="2", both_orders="")

    assert response.status_code == 302
    run = JudgeRun.objects.get()
    assert run.status == JudgeRunStatus.RUNNING
    assert not JudgeCall.objects.filter(status="ok").exists()
    answer.set()
    background.long_work_wait_idle()
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.FINISHED
    assert JudgeCall.objects.filter(status="ok").count() == 2


def test_an_admin_starts_a_judge_run_and_the_workers_judge_every_pair(client, world):
    client.force_login(world["admin"])

    response = start(client, world)

    study = world["study"]
    assert response.status_code == 302
    assert response.url == reverse("staff-study", args=[study.slug])
    run = JudgeRun.objects.get()
    assert run.status == JudgeRunStatus.FINISHED and run.both_orders
    keys = list(JudgeCall.objects.values_list("item_id", "order"))
    assert len(keys) == len(set(keys)) == 12
    assert run.figures["figures"]["verdicts"] == 12
    assert not Judgment.objects.exists()
    listing = client.get(reverse("judge-runs")).content.decode()
    assert "judge-7b" in listing and "12 / 12" in listing
    assert "sk-staff-judge-secret" not in listing
    manager_page = client.get(response.url).content.decode()
    assert 'data-testid="judges-staff-section"' in manager_page


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"items": "0"}, "The number of pairs is a whole number of at least 1."),
        ({"items": "x"}, "The number of pairs is a whole number of at least 1."),
        ({"study": "999999"}, "Choose a study."),
        ({"endpoint": ""}, "Choose the judge&#x27;s endpoint."),
        ({"language": "fr"}, "Choose the rubric&#x27;s language: zh or en."),
        ({"self_source": "999999"}, "Choose one of the LLM sources, or none."),
        ({"self_source": "human"}, "Choose one of the LLM sources, or none."),
    ],
)
def test_a_bad_start_is_refused_and_changes_nothing(client, world, overrides, message):
    client.force_login(world["admin"])
    if overrides.get("self_source") == "human":
        overrides = {"self_source": Source.objects.get(slug="human").pk}
    response = start(client, world, **overrides)
    assert response.status_code == 422
    assert message in response.content.decode()
    assert not JudgeRun.objects.exists() and world["server"].requests == []


def test_a_key_never_stored_is_refused_before_anything_is_created(client, world, monkeypatch):
    monkeypatch.delenv("STAFF_JUDGE_KEY")
    client.force_login(world["admin"])
    response = start(client, world)
    assert response.status_code == 422
    assert "STAFF_JUDGE_KEY is not set" in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_the_runs_are_named_in_the_pages_language(client, world, settings):
    client.force_login(world["admin"])
    start(client, world, language="en")

    listing = client.get(reverse("judge-runs")).content.decode()
    assert "judge-7b (English rubric, temperature 0) · both orders" in listing
    settings.LANGUAGE_CODE = "zh-hans"
    listing = client.get(reverse("judge-runs")).content.decode()
    assert "judge-7b（英文评分标准，温度 0） · 两种顺序" in listing
    study_page = client.get(reverse("staff-study", args=[world["study"].slug])).content.decode()
    assert "judge-7b（英文评分标准，温度 0）" in study_page


def test_without_runs_the_staff_page_says_how_to_start_one(admin_client):
    page = admin_client.get("/staff/judges/").content.decode()

    assert "No judge runs yet: start one below, or with the judge_study command." in page
