"""What the writers' pages tell a writer, server-side: where they stand when there is
nothing to write, and the order in which a returned dialogue is shown."""

import pytest
from django.urls import reverse

from tests.factories import UserFactory
from tests.fixtures.writing import make_run, make_writer
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
