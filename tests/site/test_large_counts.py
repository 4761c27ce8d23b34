"""Large counts on staff pages are grouped by thousands, in English and Chinese alike:
a collection run's and a judge run's tokens read "123,456", not "123456"."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Item
from collection.models import ApiCall, CallOutcome, CallPurpose, CollectionRun, ModelEndpoint
from dialogues.models import Source
from judges.models import JudgeCall, JudgeCallStatus, JudgeRun, JudgeRunStatus
from tests.builders import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(db):
    return ModelEndpoint.objects.create(name="kimi", base_url="http://127.0.0.1:9/v1", model="k")


def both_languages(client, url: str, settings) -> tuple[str, str]:
    english = client.get(url).content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    return english, client.get(url).content.decode()


def test_a_collection_runs_tokens_are_grouped_by_thousands(client, study, endpoint, settings):
    run = CollectionRun.objects.create(
        source=Source.objects.get(slug="human"),
        endpoint=endpoint,
        simulator_endpoint=endpoint,
        simulator_prompt="",
    )
    for tokens_in, tokens_out in ((100000, 4000000), (23456, 890123)):
        ApiCall.objects.create(
            run=run,
            endpoint=endpoint,
            purpose=CallPurpose.ANSWER,
            outcome=CallOutcome.OK,
            latency_ms=800,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
        )
    client.force_login(UserFactory(email="admin@example.com", is_staff=True))

    for html in both_languages(client, reverse("collection-run", args=[run.pk]), settings):
        assert "<dd>123,456 / 4,890,123</dd>" in html


def test_a_judge_runs_tokens_are_grouped_by_thousands(client, manager, study, endpoint, settings):
    run = JudgeRun.objects.create(
        study=study,
        endpoint=endpoint,
        model="k",
        temperature=0.0,
        language="zh",
        prompt_version="judge-prompt/1",
        rubric_version="abc123",
        system_prompt="你是评审",
        status=JudgeRunStatus.FINISHED,
        finished_at=timezone.now(),
    )
    item = Item.objects.filter(study=study, kind="pair").first()
    left, right = (slot.answer for slot in item.slots.order_by("slot"))
    JudgeCall.objects.create(
        run=run,
        item=item,
        order=1,
        left_answer=left,
        right_answer=right,
        left_source=left.source,
        right_source=right.source,
        status=JudgeCallStatus.OK,
        tokens_in=123456,
        tokens_out=7890,
    )
    client.force_login(manager)

    for html in both_languages(client, reverse("staff-study", args=[study.slug]), settings):
        assert ">123,456 / 7,890</td>" in html
