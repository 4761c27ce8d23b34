"""Judge runs against a local OpenAI-compatible server and the real `openai` client: what
is asked, what is stored, and that a re-run judges every item exactly once per order."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Item, ItemKind, Judgment, Metric, Rating
from collection.models import ModelEndpoint
from judges.models import (
    FIRST_ORDER,
    SWAPPED_ORDER,
    JudgeCall,
    JudgeCallStatus,
    JudgeRating,
    JudgeRun,
    JudgeRunStatus,
)
from judges.prompts import PROMPT_VERSION

from .conftest import judge

pytestmark = pytest.mark.django_db(transaction=True)


def pair_items(study):
    return Item.objects.filter(study=study, kind=ItemKind.PAIR, is_gold=False)


def test_it_rates_every_pair_on_every_metric_and_keeps_sides_and_costs(
    study, judge_key, judge_server
):
    output = judge(judge_server, study, "--items", "12")
    run = JudgeRun.objects.get()
    assert "12 verdicts" in output
    assert run.status == JudgeRunStatus.FINISHED
    assert (run.model, run.temperature, run.language) == ("judge-7b", 0.0, "zh")
    assert run.prompt_version == PROMPT_VERSION and len(run.rubric_version) == 12
    calls = list(run.calls.all())
    assert len(calls) == 12 and {c.order for c in calls} == {FIRST_ORDER}
    metrics = Metric.objects.filter(for_diversity=False).count()
    assert JudgeRating.objects.count() == 12 * 2 * metrics
    for call in calls:
        slots = {s.slot: s.answer for s in call.item.slots.all()}
        assert {call.left_answer, call.right_answer} == set(slots.values())
        assert (call.left_source, call.right_source) == (
            call.left_answer.source,
            call.right_answer.source,
        )
        assert call.status == JudgeCallStatus.OK and call.attempts == 1
        assert call.tokens_in > 0 and call.tokens_out > 0 and call.latency_ms is not None
        assert json.loads(call.raw_reply)["preference"] in ("A", "B", "tie")
        assert call.structured
    # The annotators' side rules: over 12 pairs the reference is on the left 6 times.
    reference_left = sum(c.left_source_id == study.reference_source_id for c in calls)
    assert reference_left == 6
    # The rubric the annotators read, and a JSON schema for the reply.
    request = judge_server.requests[0]
    system = request["messages"][0]["content"]
    for metric in Metric.objects.filter(for_diversity=False):
        assert metric.definition_zh in system and metric.anchors["1"]["zh"] in system
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["preference"]["enum"] == ["A", "B", "tie"]
    assert request["temperature"] == 0.0


def test_nothing_is_counted_among_the_human_judgments(study, judge_key, judge_server):
    before = (Judgment.objects.count(), Rating.objects.count())
    judge(judge_server, study, "--items", "6", "--both-orders")
    assert (Judgment.objects.count(), Rating.objects.count()) == before
    assert all(item.judgment_count == 0 for item in pair_items(study))


def test_both_orders_judges_each_pair_again_with_the_sides_swapped(study, judge_key, judge_server):
    judge(judge_server, study, "--items", "8", "--both-orders")
    calls = JudgeCall.objects.all()
    assert calls.count() == 16
    for first in calls.filter(order=FIRST_ORDER):
        swapped = calls.get(item=first.item, order=SWAPPED_ORDER)
        assert (swapped.left_answer, swapped.right_answer) == (
            first.right_answer,
            first.left_answer,
        )


def test_run_again_it_judges_only_what_has_no_verdict(study, judge_key, judge_server):
    judge(judge_server, study, "--items", "5")
    first_ids = set(JudgeCall.objects.values_list("item_id", flat=True))
    judge_server.requests.clear()
    judge(judge_server, study, "--items", "9", "--both-orders")
    # 4 new items in the first order, 9 in the swapped one: nothing judged twice.
    assert len(judge_server.requests) == 4 + 9
    assert JudgeRun.objects.count() == 1
    assert first_ids <= set(JudgeCall.objects.values_list("item_id", flat=True))
    judge_server.requests.clear()
    output = judge(judge_server, study, "--items", "9", "--both-orders")
    assert judge_server.requests == [] and "18 verdicts" in output


def test_a_run_cut_short_is_finished_by_the_next_start(study, judge_key, judge_server):
    """A killed process leaves whole verdicts and nothing else; the next start fills in."""
    judge(judge_server, study, "--items", "6", "--both-orders")
    cut = JudgeCall.objects.order_by("pk")[5:]
    JudgeCall.objects.filter(pk__in=[c.pk for c in cut]).delete()
    JudgeRun.objects.update(status=JudgeRunStatus.RUNNING)
    judge(judge_server, study, "--items", "6", "--both-orders")
    pairs = JudgeCall.objects.values_list("item_id", "order")
    assert len(pairs) == len(set(pairs)) == 12


def test_a_server_without_structured_output_is_asked_for_plain_json(study, judge_key, judge_server):
    judge_server.refuses_schema = True
    judge_server.script("ok", "fenced")
    # One call at a time (on PostgreSQL calls run on several threads): the script's order.
    judge(judge_server, study, "--items", "4", "--concurrency", "1")
    run = JudgeRun.objects.get()
    assert run.structured_output is False
    assert JudgeCall.objects.filter(status=JudgeCallStatus.OK).count() == 4
    assert not any("response_format" in r for r in judge_server.requests[1:])
    assert not JudgeCall.objects.filter(structured=True).exists()


def test_garbage_is_asked_again_and_in_the_end_recorded_as_a_failure(
    study, judge_key, judge_server, settings
):
    settings.JUDGE_REPLY_ATTEMPTS = 2
    # First call: garbage then a valid reply. Second call: four bad replies (two passes).
    judge_server.script("garbage", "ok", "garbage", "incomplete", "out_of_range", "garbage")
    with pytest.raises(CommandError, match="1 of 2 verdicts are still missing"):
        judge(judge_server, study, "--items", "2", "--concurrency", "1")
    rated, failed = (JudgeCall.objects.get(status=s) for s in ("ok", "failed"))
    assert rated.attempts == 2 and JudgeRating.objects.filter(call=rated).exists()
    assert failed.preferred_answer is None and not failed.is_tie
    assert not JudgeRating.objects.filter(call=failed).exists()
    assert "not a rating from 1 to 5" in failed.error and failed.raw_reply
    # The next start tries the failure again and turns it into a verdict.
    judge(judge_server, study, "--items", "2")
    assert JudgeCall.objects.filter(status="ok").count() == 2


def test_a_call_that_keeps_timing_out_is_a_failure_not_a_rating(study, judge_key, judge_server):
    # Three attempts in each of the two passes.
    judge_server.script(*[("timeout", 1.0)] * 6)
    with pytest.raises(CommandError, match="1 of 1 verdicts are still missing"):
        judge(judge_server, study, "--items", "1", "--timeout", "0.3")
    failure = JudgeCall.objects.get()
    assert failure.status == JudgeCallStatus.FAILED and "Timeout" in failure.error
    assert not JudgeRating.objects.exists()


def test_a_request_the_endpoint_refuses_is_a_failure_and_keeps_the_schema_question_open(
    study, judge_key, judge_server
):
    # Refused with the schema and again without it, in both passes: a content filter.
    judge_server.script(*["bad_request"] * 4)
    with pytest.raises(CommandError, match="1 of 1 verdicts are still missing"):
        judge(judge_server, study, "--items", "1")
    failure = JudgeCall.objects.get()
    assert "content filter" in failure.error and not JudgeRating.objects.exists()
    assert JudgeRun.objects.get().structured_output is None


def test_a_bad_key_stops_the_run_and_keeps_what_was_judged(study, judge_key, judge_server):
    judge_server.script("ok", "ok", "unauthorized")
    with pytest.raises(CommandError, match=r"permanent error.*Incorrect API key"):
        judge(judge_server, study, "--items", "6", "--concurrency", "1")
    run = JudgeRun.objects.get()
    assert run.status == JudgeRunStatus.FAILED
    assert JudgeCall.objects.filter(status="ok").count() == 2


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--items", "0"], "--items must be at least 1"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
        (["--temperature", "3"], "--temperature must be in 0..2"),
        (["--timeout", "0"], "--timeout must be more than 0"),
        (["--language", "fr"], "language 'fr' is not zh or en"),
        (["--self-source", "nobody"], "there is no source 'nobody'"),
        (["--self-source", "human"], "'human' is written by human fans, not by a model family"),
    ],
)
def test_bad_input_gets_a_clear_error_and_creates_nothing(
    study, judge_key, judge_server, arguments, message
):
    with pytest.raises(CommandError, match=message):
        judge(judge_server, study, *arguments)
    assert not JudgeRun.objects.exists() and not ModelEndpoint.objects.exists()
    assert judge_server.requests == []


def test_an_unknown_study_or_url_is_refused(study, judge_key, judge_server):
    study.slug = "nope"
    with pytest.raises(CommandError, match="there is no study 'nope'"):
        judge(judge_server, study)
    study.refresh_from_db()
    with pytest.raises(CommandError, match="not an http"):
        call_command(
            "judge_study", "--study", study.slug, "--base-url", "ftp://x", "--model", "m",
            "--api-key-env", "TEST_JUDGE_KEY",
        )  # fmt: skip
    assert not JudgeRun.objects.exists() and not ModelEndpoint.objects.exists()


def test_a_key_never_stored_gets_a_clear_error_and_creates_nothing(
    study, judge_server, monkeypatch
):
    monkeypatch.delenv("TEST_JUDGE_KEY", raising=False)
    with pytest.raises(CommandError, match=r"TEST_JUDGE_KEY .* is not set; nothing was created"):
        judge(judge_server, study)
    assert not JudgeRun.objects.exists() and not ModelEndpoint.objects.exists()
