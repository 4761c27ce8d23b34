"""Returns and time-outs free a participant's leases at once: the participant's own
"Leave this study" (a return), and the beat job that times out everyone past their
deadline within a minute, whether or not they ask for another item. The item they held
goes to someone else straight away, and their place is given back."""

from datetime import timedelta

import pytest
from celery import current_app
from django.urls import reverse
from django.utils import timezone

from annotation import services as annotation_services
from annotation.models import Assignment, AssignmentState, AuditAction, AuditEvent, Item, Study
from panels import services
from panels.models import Participant, ParticipantState
from tests.builders import make_panel_study, make_study, panel_participant
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db

ITEMS = 3


def admitted(panel, character, pid) -> Participant:
    """A participant through the link, consent and the choice of `character`."""
    participant = panel_participant(panel, pid=pid)
    services.participant_consent(participant=participant)
    return services.participant_admit(participant=participant, characters=[character])


def one_item_left(luffy) -> tuple[Study, Item]:
    """A study of one judgment per item where every item but one is done."""
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    last = study.items.order_by("pk").last()
    Item.objects.filter(study=study).exclude(pk=last.pk).update(judgment_count=1)
    annotation_services.character_progress_recount(study=study)
    return Study.objects.get(pk=study.pk), last


def live_leases(participant) -> int:
    return Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).count()


@pytest.fixture
def panel(study):
    return make_panel_study(study, items_per_participant=ITEMS)


def leave_url(panel):
    return reverse("panel-leave", args=[panel.study.slug])


# The service ------------------------------------------------------------------------------


def test_a_return_frees_the_participants_leases_and_place_and_is_audited(panel, luffy):
    participant = admitted(panel, luffy, "returner")
    annotation_services.assignment_next(user=participant.user)
    assert live_leases(participant) == 1

    services.participant_return(participant=participant, actor=participant.user, source="panel")

    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED
    assert participant.code == "" and participant.finished_at is not None
    assert live_leases(participant) == 0
    event = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert (event.before, event.after) == ({"state": "started"}, {"state": "returned"})
    assert event.target_id == str(participant.pk) and event.study == panel.study
    assert "panel" in event.note and "released: 1" in event.note
    assert participant.pid not in str(event.__dict__)


def test_a_return_gives_the_place_to_someone_else(study, luffy):
    panel = make_panel_study(study, places=1)
    first = panel_participant(panel, pid="first")
    with pytest.raises(services.PanelError) as full:
        panel_participant(panel, pid="second")
    assert full.value.code == "full"
    services.participant_return(participant=first, source="participant")
    assert panel_participant(panel, pid="second").state == ParticipantState.STARTED


def test_a_finished_participant_is_left_as_they_are_and_told_so(panel, luffy):
    participant = admitted(panel, luffy, "done-already")
    Participant.objects.filter(pk=participant.pk).update(
        state=ParticipantState.COMPLETED, code="C1A2B3"
    )
    with pytest.raises(services.PanelError) as refused:
        services.participant_return(participant=participant, source="panel")
    assert refused.value.code == "finished"
    assert "Completed" in refused.value.message
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert not AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).exists()


def test_an_unknown_source_is_refused_and_changes_nothing(panel):
    participant = panel_participant(panel)
    with pytest.raises(services.PanelError) as refused:
        services.participant_return(participant=participant, source="gossip")
    assert refused.value.code == "source"
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED


def test_the_item_a_returned_participant_held_goes_to_another_at_once(luffy, client):
    study, last = one_item_left(luffy)
    panel = make_panel_study(study, items_per_participant=ITEMS)
    holder = admitted(panel, luffy, "holder")
    waiting = admitted(panel, luffy, "waiting")
    lease = annotation_services.assignment_next(user=holder.user)
    assert lease.item_id == last.pk
    assert annotation_services.assignment_next(user=waiting.user) is None

    client.force_login(holder.user)
    assert client.post(leave_url(panel), {"confirm": "yes"}).status_code == 302

    lease.refresh_from_db()
    assert lease.state == AssignmentState.EXPIRED
    taken = annotation_services.assignment_next(user=waiting.user)
    assert taken is not None and taken.item_id == last.pk


# The beat job ------------------------------------------------------------------------------


def test_the_beat_job_times_out_everyone_past_their_deadline_and_frees_their_leases(panel, luffy):
    late = admitted(panel, luffy, "late")
    annotation_services.assignment_next(user=late.user)
    on_time = admitted(panel, luffy, "on-time")
    annotation_services.assignment_next(user=on_time.user)
    Participant.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(seconds=30))

    assert services.participants_overdue_time_out() == [late.pk]

    late.refresh_from_db()
    on_time.refresh_from_db()
    assert late.state == ParticipantState.TIMED_OUT and live_leases(late) == 0
    assert on_time.state == ParticipantState.STARTED and live_leases(on_time) == 1
    event = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert event.after == {"state": "timed_out"} and "deadline" in event.note
    # Run again (a redelivered task, a second beat): nobody is timed out twice.
    assert services.participants_overdue_time_out() == []
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1


def test_the_beat_job_leaves_finished_participants_alone(panel, luffy):
    completed = admitted(panel, luffy, "completed")
    Participant.objects.filter(pk=completed.pk).update(
        state=ParticipantState.COMPLETED,
        code="C1A2B3",
        deadline=timezone.now() - timedelta(minutes=5),
    )
    assert services.participants_overdue_time_out() == []
    completed.refresh_from_db()
    assert completed.state == ParticipantState.COMPLETED


def test_the_beat_job_is_a_registered_task_run_every_minute(panel, luffy, settings):
    name = "panels.tasks.participants_time_out"
    entries = [entry for entry in settings.CELERY_BEAT_SCHEDULE.values() if entry["task"] == name]
    assert len(entries) == 1
    assert entries[0]["schedule"].minute == set(range(60))
    late = admitted(panel, luffy, "late")
    Participant.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert current_app.tasks[name].apply().get() == [late.pk]


# The participant's "Leave this study" -----------------------------------------------------


def test_leaving_asks_for_confirmation_then_returns_and_says_so(client, panel, luffy):
    participant = admitted(panel, luffy, "leaver")
    annotation_services.assignment_next(user=participant.user)
    client.force_login(participant.user)

    page = client.get(leave_url(panel))
    assert page.status_code == 200
    assert b'data-testid="panel-leave-form"' in page.content
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED

    response = client.post(leave_url(panel), {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == leave_url(panel)
    left = client.get(leave_url(panel))
    assert left.status_code == 200 and b'data-testid="panel-left"' in left.content
    assert b"Return submission" in left.content
    # A way back to the panel, to return the study there: its site, from the completion link.
    assert b'href="https://app.prolific.com/"' in left.content
    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED and live_leases(participant) == 0
    event = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert event.actor == participant.user and "participant" in event.note
    # Their work is over: the rating page sends them to their end page, with no code.
    assert client.get(reverse("annotate"))["Location"] == reverse(
        "panel-done", args=[panel.study.slug]
    )
    done = client.get(reverse("panel-done", args=[panel.study.slug]))
    assert b'data-testid="panel-over"' in done.content and b"C1A2B3" not in done.content
    assert b'data-testid="panel-site"' in done.content


def test_a_leave_without_the_confirmation_changes_nothing(client, panel, luffy):
    participant = admitted(panel, luffy, "hesitant")
    client.force_login(participant.user)
    response = client.post(leave_url(panel), {})
    assert response.status_code == 422
    assert b'data-testid="error"' in response.content
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED


def test_an_item_on_screen_cannot_be_submitted_after_leaving(client, panel, luffy):
    participant = admitted(panel, luffy, "tab-open")
    client.force_login(participant.user)
    item_url = client.get(reverse("annotate"))["Location"]
    client.post(leave_url(panel), {"confirm": "yes"})
    client.post(item_url, complete_form())
    assert not participant.user.judgments.exists()


def test_a_finished_participant_cannot_leave_and_is_sent_to_their_end(client, panel, luffy):
    participant = admitted(panel, luffy, "finished")
    Participant.objects.filter(pk=participant.pk).update(
        state=ParticipantState.COMPLETED, code="C1A2B3"
    )
    client.force_login(participant.user)
    done = reverse("panel-done", args=[panel.study.slug])
    assert client.get(leave_url(panel))["Location"] == done
    assert client.post(leave_url(panel), {"confirm": "yes"})["Location"] == done
    participant.refresh_from_db()
    assert participant.state == ParticipantState.COMPLETED


def test_someone_elses_leave_page_does_not_exist(client, panel, alice):
    panel_participant(panel)
    client.force_login(alice)
    assert client.get(leave_url(panel)).status_code == 404
    assert client.post(leave_url(panel), {"confirm": "yes"}).status_code == 404
    assert Participant.objects.get().state == ParticipantState.STARTED


def test_the_way_out_is_on_the_participants_pages_and_not_on_an_annotators(
    client, panel, luffy, alice
):
    open_to_all = make_study(characters=[luffy])
    participant = admitted(panel, luffy, "reader")
    client.force_login(participant.user)
    item_url = client.get(reverse("annotate"))["Location"]
    for url in (reverse("panel-start", args=[panel.study.slug]), item_url):
        page = client.get(url)
        assert leave_url(panel).encode() in page.content, url
        assert b'class="leave-link"' in page.content
    client.force_login(alice)
    alices_item = client.get(reverse("annotate"))["Location"]
    token = alices_item.rstrip("/").rsplit("/", 1)[-1]
    assert Assignment.objects.get(token=token).item.study == open_to_all
    page = client.get(alices_item)
    assert page.status_code == 200 and b"leave-link" not in page.content


def test_the_leave_pages_read_in_chinese(client, panel, luffy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    participant = admitted(panel, luffy, "zh")
    client.force_login(participant.user)
    ask = client.get(leave_url(panel)).content.decode()
    assert "退出本研究" in ask and "Leave this study" not in ask
    client.post(leave_url(panel), {"confirm": "yes"})
    left = client.get(leave_url(panel)).content.decode()
    assert "你已退出本研究" in left


def test_a_participant_of_another_panel_can_leave_too(client, demo_dataset, luffy):
    generic = make_panel_study(
        make_study(characters=[luffy]),
        provider="generic",
        id_parameter="uid",
        completion_url_template="https://panel.example.com/back?code={code}",
    )
    participant = admitted(generic, luffy, "generic-1")
    client.force_login(participant.user)
    client.post(leave_url(generic), {"confirm": "yes"})
    left = client.get(leave_url(generic)).content.decode()
    assert "tell the panel that sent you" in left and "Prolific" not in left
    participant.refresh_from_db()
    assert participant.state == ParticipantState.RETURNED


def test_a_participant_past_their_deadline_cannot_keep_an_item_longer(client, panel, luffy):
    """Before the beat job times them out, a participant whose time is up asking to keep
    their item is sent to where their work ends, and the lease is left as it was."""
    late = admitted(panel, luffy, "late-keeper")
    lease = annotation_services.assignment_next(user=late.user)
    Participant.objects.filter(pk=late.pk).update(deadline=timezone.now() - timedelta(seconds=5))
    client.force_login(late.user)

    response = client.post(reverse("annotate-keep", args=[lease.token]))

    assert response.status_code == 302
    assert response["Location"] != reverse("annotate-item", args=[lease.token])
    assert Assignment.objects.get(pk=lease.pk).expires_at == lease.expires_at
