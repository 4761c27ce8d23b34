"""What a visitor sees while the database is unreachable: a 503 that says to send the
request again, never a 500 traceback (the fault itself is provoked in test_faults.py)."""

import pytest
from django.db import OperationalError

from annotation.models import Judgment
from annotation.views import annotate
from tests.builders import lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def database_gone(monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    # The first read of the rating page and the submission: the lease, with the
    # annotator's standing.
    monkeypatch.setattr(annotate.selectors, "lease_at_work", unreachable)


def test_a_plain_submission_gets_a_full_503_page(client, alice, database_gone):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(f"/annotate/{lease.token}/", complete_form())

    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    body = response.content.decode()
    assert '<html lang="en">' in body
    assert "send it again" in body and "never counted twice" in body
    assert "OperationalError" not in body and "127.0.0.1" not in body
    assert Judgment.objects.count() == 0


def test_an_htmx_submission_gets_a_message_above_the_form(client, alice, database_gone):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 503
    assert response["HX-Retarget"] == "#work"
    assert response["HX-Reswap"] == "afterbegin"
    body = response.content.decode()
    assert body.startswith('<p class="error" role="alert"') and "<html" not in body


def test_the_page_speaks_chinese_by_default(client, alice, database_gone, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    lease = lease_pair(alice)
    client.force_login(alice)

    body = client.get(f"/annotate/{lease.token}/").content.decode()

    assert '<html lang="zh-hans">' in body
    assert "无法连接数据库" in body


def test_other_errors_are_not_disguised_as_an_outage(client, alice, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(annotate.selectors, "lease_at_work", broken)
    lease = lease_pair(alice)
    client.force_login(alice)

    with pytest.raises(ValueError):
        client.get(f"/annotate/{lease.token}/")
