"""What the writers' pages tell a writer, server-side: where they stand when there is
nothing to write, and the order in which a returned dialogue is shown."""

import pytest
from django.urls import reverse

from tests.builders import UserFactory, make_run, make_writer
from writing.models import WriterApplication

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(luffy, demo_dataset):
    from dialogues.models import Scenario

    return make_run([luffy], list(Scenario.objects.order_by("number")[:1]))


def messages_after(client, response) -> str:
    assert response.status_code == 302 and response["Location"] == reverse("write")
    return client.get(response["Location"]).content.decode()


def test_next_says_the_application_is_being_reviewed_while_it_waits(client, run, luffy):
    pending = make_writer("pending@example.com", [luffy], approve=False)
    client.force_login(pending)

    page = messages_after(client, client.get(reverse("write-next")))

    assert "Your application to write is being reviewed" in page
    assert "Nothing to write right now" not in page


def test_next_asks_someone_who_never_applied_to_apply_first(client, run):
    client.force_login(UserFactory(email="stranger@example.com"))

    page = messages_after(client, client.get(reverse("write-next")))

    assert "Apply to write a character first" in page
    assert "Nothing to write right now" not in page


def test_next_says_nothing_to_write_once_an_approved_writer_has_done_everything(
    client, luffy, demo_dataset
):
    writer = make_writer("wendy@example.com", [luffy])
    client.force_login(writer)

    page = messages_after(client, client.get(reverse("write-next")))

    assert "Nothing to write right now" in page


def test_next_says_rejected_when_every_application_was_rejected(client, run, luffy):
    from writing import services

    writer = make_writer("rejected@example.com", [luffy], approve=False)
    services.writer_review(
        application=WriterApplication.objects.get(user=writer),
        reviewer=UserFactory(email="boss2@example.com"),
        approve=False,
        note="再练练",
    )
    client.force_login(writer)

    page = messages_after(client, client.get(reverse("write-next")))

    assert "Your application to write was not approved" in page
    assert "Nothing to write right now" not in page


def test_the_waiting_writer_is_told_in_chinese_by_default(client, run, luffy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    pending = make_writer("pending@example.com", [luffy], approve=False)
    client.force_login(pending)

    page = messages_after(client, client.get(reverse("write-next")))

    assert "你的写作申请正在审核中" in page


def test_staff_read_a_dialogues_flags_as_words(client, run, luffy, settings):
    from writing import services
    from writing.models import WritingTask

    writer = make_writer("wendy@example.com", [luffy])
    task = services.task_next(user=writer)
    WritingTask.objects.filter(pk=task.pk).update(
        flags=["paste:r1", "near_duplicate:gpt-4o:r2", "something_new"]
    )
    client.force_login(UserFactory(email="manager@example.com", is_staff=True))

    review = client.get(reverse("write-staff-task", args=[task.pk])).content.decode()
    listing = client.get(reverse("write-staff-run", args=[run.pk])).content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = client.get(reverse("write-staff-task", args=[task.pk])).content.decode()

    for page in (review, listing):
        assert "Pasted text in round 1" in page
        assert "Round 2 is close to an answer of gpt-4o" in page
        assert "something_new" in page  # an unknown flag still shows
        assert "paste:r1" not in page and "near_duplicate:" not in page
    assert "第 1 轮有粘贴的文字" in chinese


def test_the_new_run_form_offers_the_scenarios_the_database_holds(client, demo_dataset):
    from tests.builders import study_manager_named

    client.force_login(study_manager_named("manager@example.com"))

    page = client.get(reverse("write-staff")).content.decode()

    assert 'name="scenarios" required value="1-2,16-17,31-32,46-47"' in page


# --- the same form sent twice, or from a tab left open --------------------------------


def round_1_with_follow_up(run, luffy):
    """Wendy's round 1 handed in and Umar's follow-up written: round 2 is Wendy's."""
    from tests.builders import FOLLOWUP, ROUND_1
    from writing import services

    wendy = make_writer("wendy@example.com", [luffy])
    umar = make_writer("umar@example.com", [luffy])
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    followup = services.followup_next(user=umar)
    services.followup_submit(user=umar, followup_token=followup.followup_token, text=FOLLOWUP)
    return wendy, umar, task


def test_a_round_1_form_from_another_tab_never_becomes_round_2(client, run, luffy):
    from tests.builders import ROUND_1
    from writing.models import TaskState, WritingTask

    wendy, _umar, task = round_1_with_follow_up(run, luffy)
    client.force_login(wendy)

    stale = "另一个标签页里还开着的第一轮回答，不该变成第二轮。"
    response = client.post(
        reverse("write-task", args=[task.token]), {"answer": stale, "round": "1"}
    )

    assert response.status_code == 422
    page = response.content.decode()
    assert "Round 1 of this task is already handed in." in page
    assert stale not in page  # not put into the round-2 box either
    task = WritingTask.objects.get(pk=task.pk)
    assert task.state == TaskState.ROUND_2
    assert task.answer_r1 == ROUND_1 and task.answer_r2 == ""


def test_a_round_sent_twice_is_saved_once_and_says_so(client, run, luffy):
    from tests.builders import ROUND_1, ROUND_2
    from writing.models import TaskState, WritingTask

    wendy, _umar, task = round_1_with_follow_up(run, luffy)
    client.force_login(wendy)
    url = reverse("write-task", args=[task.token])

    again_1 = client.post(url, {"answer": ROUND_1, "round": "1"})
    assert again_1.status_code == 302 and again_1["Location"] == url
    for _twice in range(2):
        sent = client.post(url, {"answer": ROUND_2, "round": "2"})
        assert "Handed in. Thank you!" in messages_after(client, sent)
    task = WritingTask.objects.get(pk=task.pk)
    assert task.state == TaskState.SUBMITTED and task.answer_r2 == ROUND_2


def test_a_follow_up_sent_twice_is_saved_once_and_says_so(client, run, luffy):
    from tests.builders import FOLLOWUP
    from writing.models import WritingTask

    _wendy, umar, task = round_1_with_follow_up(run, luffy)
    client.force_login(umar)

    response = client.post(
        reverse("write-user-submit", args=[task.followup_token]), {"question": FOLLOWUP}
    )

    assert response.status_code == 302
    assert "Sent. The writer can answer now." in client.get(response["Location"]).content.decode()
    assert WritingTask.objects.get(pk=task.pk).question_r2 == FOLLOWUP


def test_an_answer_sent_after_the_lease_ran_out_is_kept_while_nobody_took_the_scenario(
    client, run, luffy
):
    from tests.builders import ROUND_1
    from writing.models import TaskState, WritingTask

    wendy = make_writer("wendy@example.com", [luffy])
    client.force_login(wendy)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(writer=wendy)
    WritingTask.objects.filter(pk=task.pk).update(lease_expires_at="2000-01-01T00:00:00Z")

    response = client.post(
        reverse("write-task", args=[task.token]), {"answer": ROUND_1, "round": "1"}
    )

    assert response.status_code == 302
    task.refresh_from_db()
    assert task.state == TaskState.AWAITING_FOLLOWUP and task.answer_r1 == ROUND_1


def test_a_late_answer_is_refused_once_other_writers_have_taken_the_characters_places(
    client, luffy, demo_dataset
):
    """A run with one writer per character: the lease ran out, another writer took a
    scenario of the same character, and the late answer would make two."""
    from dialogues.models import Scenario
    from tests.builders import ROUND_1
    from writing.models import TaskState, WritingTask

    make_run([luffy], list(Scenario.objects.order_by("number")[:2]), writers_per_character=1)
    wendy = make_writer("wendy@example.com", [luffy])
    client.force_login(wendy)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(writer=wendy)
    WritingTask.objects.filter(pk=task.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    # Walter has since written the character's other scenario.
    walter = make_writer("walter@example.com", [luffy])
    taken = WritingTask.objects.exclude(pk=task.pk).filter(writer__isnull=True)
    assert taken.update(writer=walter, state=TaskState.AWAITING_FOLLOWUP, answer_r1=ROUND_1) == 1

    response = client.post(
        reverse("write-task", args=[task.token]), {"answer": ROUND_1, "round": "1"}
    )

    assert "Your time for this task ran out" in response.content.decode()
    task.refresh_from_db()
    assert task.state == TaskState.ROUND_1 and task.answer_r1 == ""


def test_an_answer_sent_to_a_scenario_another_writer_took_comes_back_to_copy(client, run, luffy):
    from tests.builders import ROUND_1
    from writing.models import WritingTask

    wendy = make_writer("wendy@example.com", [luffy])
    client.force_login(wendy)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(writer=wendy)
    # Her time ran out and Walter took the scenario.
    walter = make_writer("walter@example.com", [luffy])
    WritingTask.objects.filter(pk=task.pk).update(writer=walter)

    response = client.post(
        reverse("write-task", args=[task.token]), {"answer": ROUND_1, "round": "1"}
    )

    assert response.status_code == 404
    page = response.content.decode()
    assert 'data-testid="sent-text"' in page and ROUND_1 in page
    task.refresh_from_db()
    assert task.writer == walter and task.answer_r1 == ""
    # Looking at the task shows nothing of anyone's text.
    assert (
        'data-testid="sent-text"'
        not in client.get(reverse("write-task", args=[task.token])).content.decode()
    )


def test_a_late_answer_is_refused_once_the_run_is_past_its_deadline(client, run, luffy):
    """Nobody would write its follow-up: the dialogue would be left half-way for good."""
    from tests.builders import ROUND_1
    from writing.models import TaskState, WritingRun, WritingTask

    wendy = make_writer("wendy@example.com", [luffy])
    client.force_login(wendy)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(writer=wendy)
    WritingTask.objects.filter(pk=task.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    WritingRun.objects.filter(pk=run.pk).update(deadline="2000-01-02T00:00:00Z")

    response = client.post(
        reverse("write-task", args=[task.token]), {"answer": ROUND_1, "round": "1"}
    )

    assert "Your time for this task ran out" in response.content.decode()
    task.refresh_from_db()
    assert task.state == TaskState.ROUND_1 and task.answer_r1 == ""
