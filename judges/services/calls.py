"""One judge call: the pair shown on the planned sides, the model asked for a verdict, the
reply read strictly, and the outcome stored as ratings or as a failure, never both.

Structured output first: a JSON-schema `response_format`. A server that refuses that
request (400/422) is asked again in plain JSON, and the run remembers it. A reply that is
not a complete verdict is asked again up to `JUDGE_REPLY_ATTEMPTS` times, then recorded as
a failure with the reply and the reason; the next pass of the run tries it again."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction

from annotation.models import Item
from annotation.selectors import item_block
from collection.client import (
    CallFailed,
    Completion,
    PermanentCallError,
    RefusedCallError,
    chat_complete,
)
from collection.models import EndpointKeyMissing

from ..models import JudgeCall, JudgeCallStatus, JudgeRating, JudgeRun
from ..prompts import ShownAnswer, pair_message, response_format, rubric_metrics
from ..replies import ReplyInvalid, Verdict, verdict_read
from ..selectors import PlannedCall, metrics_of_pairs
from .runs import run_fail


class CallOutcome:
    RATED = "rated"
    FAILED = "failed"
    PERMANENT = "permanent"  # the endpoint refuses everything: stop the run
    ALREADY = "already"  # another pass or process rated it first
    STOPPED = "stopped"  # the run was paused or cancelled on the judges' page


@dataclass
class _Asked:
    """What the attempts of one call added up to."""

    attempts: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    structured: bool = False
    completion: Completion | None = None
    errors: list[str] = field(default_factory=list)

    def heard(self, completion: Completion) -> None:
        self.completion = completion
        self.tokens_in += completion.tokens_in or 0
        self.tokens_out += completion.tokens_out or 0


def _messages(run: JudgeRun, item: Item, left_slot: int) -> list[dict]:
    block = item_block(item)
    context = block.context
    shown = []
    for slot in (left_slot, 1 - left_slot):
        answer = block.slots[slot]
        round_1 = context.get(answer.source_id)
        shown.append(
            ShownAnswer(
                text=answer.text,
                question=answer.question,
                context_answer=round_1.text if round_1 else "",
            )
        )
    character = item.character
    zh = run.language == "zh"
    user = pair_message(
        work=character.work_zh if zh or not character.work_en else character.work_en,
        name=character.name_zh if zh or not character.name_en else character.name_en,
        scenario=item.scenario.question if item.scenario_id else "",
        answers=shown,
        language=run.language,
    )
    return [{"role": "system", "content": run.system_prompt}, {"role": "user", "content": user}]


def _ask(run: JudgeRun, messages: list[dict], slugs: list[str], asked: _Asked) -> Verdict:
    """Ask until a valid verdict comes back; raises ReplyInvalid or CallFailed."""
    metrics = rubric_metrics(metrics_of_pairs(), run.language)
    schema = {"response_format": response_format(metrics)}
    while True:
        asked.attempts += 1
        asked.structured = run.structured_output is not False
        try:
            completion = chat_complete(
                endpoint=run.endpoint,
                messages=messages,
                extra=schema if asked.structured else None,
            )
        except RefusedCallError as error:
            if run.structured_output is not None:
                raise
            # Refused with the schema, before the server has ever taken one: asked once
            # in plain JSON. Refused again, the request itself is refused (a content
            # filter); answered, the server cannot take the schema: plain from now on.
            asked.errors.append(f"refused with response_format: {error}")
            asked.structured = False
            completion = chat_complete(endpoint=run.endpoint, messages=messages)
            JudgeRun.objects.filter(pk=run.pk).update(structured_output=False)
            run.structured_output = False
        asked.heard(completion)
        try:
            verdict = verdict_read(completion.text, slugs)
        except ReplyInvalid as error:
            asked.errors.append(str(error))
            if asked.attempts >= settings.JUDGE_REPLY_ATTEMPTS:
                raise
            continue
        if asked.structured and run.structured_output is None:
            JudgeRun.objects.filter(pk=run.pk, structured_output__isnull=True).update(
                structured_output=True
            )
            run.structured_output = True
        return verdict


def judge_call(*, run: JudgeRun, planned: PlannedCall) -> str:
    """Judge one item in one order, unless it already has a verdict (a `CallOutcome`)."""
    if run.calls.filter(
        item_id=planned.item_id, order=planned.order, status=JudgeCallStatus.OK
    ).exists():
        return CallOutcome.ALREADY
    item = Item.objects.select_related("character", "scenario").get(pk=planned.item_id)
    block = item_block(item)
    left, right = block.slots[planned.left_slot], block.slots[1 - planned.left_slot]
    slugs = [m.slug for m in metrics_of_pairs()]
    asked = _Asked()
    verdict, error, outcome = None, "", CallOutcome.RATED
    try:
        verdict = _ask(run, _messages(run, item, planned.left_slot), slugs, asked)
    except ReplyInvalid:
        error, outcome = "; ".join(asked.errors)[-4000:], CallOutcome.FAILED
    except PermanentCallError as failure:
        error, outcome = str(failure), CallOutcome.PERMANENT
    except (CallFailed, EndpointKeyMissing) as failure:
        error, outcome = str(failure), CallOutcome.FAILED
    completion = asked.completion
    fields = {
        "left_answer": left,
        "right_answer": right,
        "left_source_id": left.source_id,
        "right_source_id": right.source_id,
        "status": JudgeCallStatus.OK if verdict else JudgeCallStatus.FAILED,
        "preferred_answer": ({"A": left, "B": right}.get(verdict.preference) if verdict else None),
        "is_tie": bool(verdict and verdict.preference == "tie"),
        "structured": asked.structured,
        "raw_reply": completion.text if completion else "",
        "error": error[:4000],
        "attempts": asked.attempts,
        "latency_ms": completion.latency_ms if completion else None,
        "tokens_in": asked.tokens_in if completion else None,
        "tokens_out": asked.tokens_out if completion else None,
        "finish_reason": completion.finish_reason if completion else "",
    }
    try:
        with transaction.atomic():
            if _store(run, planned, fields, verdict, left, right) is False:
                return CallOutcome.ALREADY
    except IntegrityError:
        # Another process created the row between our read and our write: it stands.
        return CallOutcome.ALREADY
    if outcome == CallOutcome.PERMANENT:
        run_fail(run=run, error=error)
    return outcome


def _store(run, planned, fields, verdict, left, right) -> bool:
    call = (
        JudgeCall.objects.select_for_update()
        .filter(run=run, item_id=planned.item_id, order=planned.order)
        .first()
    )
    if call is not None and call.status == JudgeCallStatus.OK:
        return False
    if call is None:
        call = JudgeCall.objects.create(
            run=run, item_id=planned.item_id, order=planned.order, **fields
        )
    else:
        for name, value in fields.items():
            setattr(call, name, value)
        call.save()
    if verdict is not None:
        metric_of = {m.slug: m for m in metrics_of_pairs()}
        JudgeRating.objects.bulk_create(
            JudgeRating(call=call, answer=answer, metric=metric_of[slug], value=value)
            for side, answer in (("A", left), ("B", right))
            for slug, value in verdict.ratings[side].items()
        )
    return True
