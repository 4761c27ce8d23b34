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
