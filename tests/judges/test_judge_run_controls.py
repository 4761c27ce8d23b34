"""Admins pause, resume and cancel a judge run from the judges' page, as they do a
collection run: a paused run calls no model, resuming judges what is missing, every
change is in the audit trail, and a control that does not apply changes nothing."""

import pytest
from django.urls import reverse

from annotation.models import AuditAction, AuditEvent
from collection.models import ModelEndpoint
from judges import services
from judges.models import JudgeCall, JudgeRun, JudgeRunStatus
from judges.runner import run_to_end
from judges.selectors import run_missing_calls
from judges.tasks import judge_call
from tests.builders import UserFactory, make_study, study_manager_named

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(demo_dataset, judge_server, monkeypatch):
    monkeypatch.setenv("CONTROL_JUDGE_KEY", "sk-control-judge-secret")
    endpoint = ModelEndpoint.objects.create(
        name="Judge under control",
        base_url=judge_server.url,
        model="judge-7b",
        temperature=0,
        api_key_env="CONTROL_JUDGE_KEY",
        rate_per_minute=100000,
    )
    # Started as the page starts it, but not yet handed to the workers.
    run = services.run_start(study=make_study(rounds=(1,)), endpoint=endpoint, items=3)
    return {
        "run": run,
        "server": judge_server,
        "admin": UserFactory(email="admin@example.com", is_staff=True),
        "manager": study_manager_named("manager@example.com"),
    }


def judge_events():
    return AuditEvent.objects.filter(action__startswith="judge.")


def control(client, run, action):
    return client.post(reverse("judge-run-control", args=[run.pk]), {"action": action})


def test_a_paused_run_calls_no_model_and_resuming_judges_what_is_missing(client, world):
    run = world["run"]
    client.force_login(world["admin"])
    planned = run_missing_calls(run)[0]

    assert control(client, run, "pause").status_code == 302
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.PAUSED
    # A call already queued when the run was paused finds it stopped.
    assert judge_call(run.pk, planned.item_id, planned.order, planned.left_slot) == "stopped"
    assert world["server"].requests == [] and not JudgeCall.objects.exists()
    page = client.get(reverse("judge-runs")).content.decode()
    assert 'value="resume"' in page and 'value="pause"' not in page

    control(client, run, "resume")

    run.refresh_from_db()
    assert run.status == JudgeRunStatus.FINISHED
    assert JudgeCall.objects.filter(run=run).count() == 3
    actions = list(judge_events().order_by("pk").values_list("action", flat=True))
    assert actions == [AuditAction.JUDGE_RUN_PAUSE, AuditAction.JUDGE_RUN_RESUME]


def test_a_cancelled_run_keeps_its_verdicts_and_shows_no_controls(client, world):
    run = world["run"]
    client.force_login(world["admin"])

    control(client, run, "cancel")

    run.refresh_from_db()
    assert run.status == JudgeRunStatus.CANCELLED
    assert world["server"].requests == []
    page = client.get(reverse("judge-runs")).content.decode()
    assert 'data-testid="judge-run-control"' not in page


@pytest.mark.parametrize("action", ["resume", "explode", ""])
def test_a_control_that_does_not_apply_is_refused_and_changes_nothing(client, world, action):
    run = world["run"]
    client.force_login(world["admin"])

    response = control(client, run, action)

    assert response.status_code == 302
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.RUNNING
    assert not judge_events().exists()
    page = client.get(reverse("judge-runs")).content.decode()
    assert '<li class="error">' in page


def test_only_admins_control_a_run(client, world):
    run = world["run"]
    assert control(client, run, "pause").status_code == 302  # to the log-in page
    client.force_login(world["manager"])
    assert control(client, run, "pause").status_code == 403
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.RUNNING and not judge_events().exists()


def test_a_finished_run_cannot_be_paused(client, world):
    run = world["run"]
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRunStatus.FINISHED)
    with pytest.raises(services.JudgeError, match="cannot be paused"):
        services.run_control(run=run, action="pause")
    run.refresh_from_db()
    assert run.status == JudgeRunStatus.FINISHED


def test_a_run_paused_on_the_page_stops_the_command_driving_it(world):
    run = world["run"]
    ModelEndpoint.objects.filter(pk=run.endpoint_id).update(concurrency=1)
    run.refresh_from_db()

    def pause_after_the_first(outcome):
        if outcome == services.CallOutcome.RATED and run.calls.count() == 1:
            services.run_control(run=run, action="pause")

    result = run_to_end(run, on_call=pause_after_the_first)

    assert result.status == JudgeRunStatus.PAUSED
    # The call under way when the page paused it may finish; none starts after.
    assert 1 <= JudgeCall.objects.filter(run=run).count() <= 2
