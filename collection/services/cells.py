"""Collecting one cell: one character and one scenario of a run.

Round 1, then the simulated round-2 question reacting to that answer, then round 2 with
the whole conversation. Every write is idempotent, because the same cell can be attempted
by a restarted command, a redelivered task or two workers at once: the database's unique
constraints keep one answer per source, character, scenario and round, and a cell that
already has its answers costs no API call.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from dialogues.models import Character, Scenario
from dialogues.services import answer_put

from .. import guards
from ..client import (
    Attempt,
    PermanentCallError,
    RefusedCallError,
    TransientCallError,
    chat_complete,
)
from ..models import (
    ApiCall,
    CallOutcome,
    CallPurpose,
    CellFailure,
    CollectionRun,
    EndpointKeyMissing,
    GeneratedAnswer,
    ReviewStatus,
    RunStatus,
    SimulatedFollowup,
)
from ..prompts import current_character_prompt, render_character_prompt
from ..simulator import EmptyFollowup, simulate_followup
from .runs import run_fail


def _call_recorder(*, run, endpoint, purpose, character, scenario, round_):
    def record(attempt: Attempt, will_retry: bool):
        if attempt.ok:
            outcome = CallOutcome.OK
        elif not attempt.transient:
            outcome = CallOutcome.PERMANENT
        else:
            outcome = CallOutcome.RETRIED if will_retry else CallOutcome.GAVE_UP
        completion = attempt.completion
        ApiCall.objects.create(
            run=run,
            endpoint=endpoint,
            purpose=purpose,
            character=character,
            scenario_number=scenario.number,
            round=round_,
            outcome=outcome,
            status_code=attempt.status_code,
            error=attempt.error,
            latency_ms=attempt.latency_ms,
            tokens_in=completion.tokens_in if completion else None,
            tokens_out=completion.tokens_out if completion else None,
            finish_reason=completion.finish_reason if completion else "",
        )

    return record


def accept_into_source(generated: GeneratedAnswer) -> None:
    """The accepted text becomes the source's `dialogues.Answer`, like an imported one."""
    generated.answer = answer_put(
        character=generated.character,
        scenario=generated.scenario,
        source=generated.source,
        round=generated.round,
        question=generated.question,
        text=generated.text,
    )


def _generate(*, run, character, scenario, round_, question, messages, prompt, system_prompt):
    endpoint = run.endpoint
    completion = chat_complete(
        endpoint=endpoint,
        messages=messages,
        on_attempt=_call_recorder(
            run=run,
            endpoint=endpoint,
            purpose=CallPurpose.ANSWER,
            character=character,
            scenario=scenario,
            round_=round_,
        ),
    )
    flags = guards.answer_flags(
        completion.text, finish_reason=completion.finish_reason, model=endpoint.model
    )
    generated = GeneratedAnswer(
        run=run,
        source=run.source,
        character=character,
        scenario=scenario,
        round=round_,
        question=question,
        text=completion.text,
        system_prompt=system_prompt,
        prompt=prompt,
        model=completion.model,
        finish_reason=completion.finish_reason,
        latency_ms=completion.latency_ms,
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
        flags=flags,
        review_status=ReviewStatus.FLAGGED if flags else ReviewStatus.ACCEPTED,
    )
    try:
        with transaction.atomic():
            if not flags:
                generated.reviewed_at = timezone.now()
                accept_into_source(generated)
            generated.save()
    except IntegrityError:
        # Another process filled this cell while we waited for the model: keep theirs.
        return GeneratedAnswer.objects.get(
            source=run.source, character=character, scenario=scenario, round=round_
        )
    return generated


def _followup(*, run, character, scenario, first: GeneratedAnswer) -> SimulatedFollowup:
    existing = SimulatedFollowup.objects.filter(
        source=run.source, character=character, scenario=scenario
    ).first()
    if existing is not None:
        return existing
    turn = simulate_followup(
        endpoint=run.simulator_endpoint,
        character=character,
        question_r1=first.question,
        answer_r1=first.text,
        prompt=run.simulator_prompt,
        on_attempt=_call_recorder(
            run=run,
            endpoint=run.simulator_endpoint,
            purpose=CallPurpose.FOLLOWUP,
            character=character,
            scenario=scenario,
            round_=2,
        ),
    )
    try:
        with transaction.atomic():
            return SimulatedFollowup.objects.create(
                source=run.source,
                character=character,
                scenario=scenario,
                run=run,
                text=turn.text,
                simulator_prompt=turn.prompt,
                model=turn.model,
                latency_ms=turn.latency_ms,
                tokens_in=turn.tokens_in,
                tokens_out=turn.tokens_out,
                finish_reason=turn.finish_reason,
            )
    except IntegrityError:
        return SimulatedFollowup.objects.get(
            source=run.source, character=character, scenario=scenario
        )


class CellOutcome:
    """What `cell_collect` did; the runner and the tasks decide what comes next from it."""

    DONE = "done"
    FAILED = "failed"
    STOPPED = "stopped"
    PERMANENT = "permanent"


def _still_running(run: CollectionRun) -> bool:
    run.refresh_from_db(fields=["status"])
    return run.status == RunStatus.RUNNING


def cell_collect(*, run: CollectionRun, character: Character, scenario: Scenario) -> str:
    """Collect whatever this cell still lacks. Returns a CellOutcome; never raises for an
    endpoint's errors: a permanent one fails the run (keeping every answer so far), a
    transient one that outlasted the retries is recorded as the cell's failure."""
    if not _still_running(run):
        return CellOutcome.STOPPED
    have = {
        g.round: g
        for g in GeneratedAnswer.objects.filter(
            source=run.source, character=character, scenario=scenario
        )
    }
    try:
        if not set(run.rounds) <= have.keys():
            prompt = current_character_prompt(character)
            system_prompt = render_character_prompt(prompt.template, character)
            conversation = [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": scenario.question},
            ]
            # Round 2 needs round 1 as its context, even when only round 2 is asked for.
            first = have.get(1) or _generate(
                run=run,
                character=character,
                scenario=scenario,
                round_=1,
                question=scenario.question,
                messages=conversation,
                prompt=prompt,
                system_prompt=system_prompt,
            )
            if 2 in run.rounds and 2 not in have:
                if not _still_running(run):
                    return CellOutcome.STOPPED
                followup = _followup(run=run, character=character, scenario=scenario, first=first)
                if not _still_running(run):
                    return CellOutcome.STOPPED
                _generate(
                    run=run,
                    character=character,
                    scenario=scenario,
                    round_=2,
                    question=followup.text,
                    messages=[
                        *conversation,
                        {"role": "assistant", "content": first.text},
                        {"role": "user", "content": followup.text},
                    ],
                    prompt=prompt,
                    system_prompt=system_prompt,
                )
    except (PermanentCallError, EndpointKeyMissing) as error:
        run_fail(run=run, error=str(error))
        return CellOutcome.PERMANENT
    except (TransientCallError, RefusedCallError, EmptyFollowup) as error:
        CellFailure.objects.update_or_create(
            run=run, character=character, scenario=scenario, defaults={"error": str(error)}
        )
        return CellOutcome.FAILED
    CellFailure.objects.filter(run=run, character=character, scenario=scenario).delete()
    return CellOutcome.DONE


def cell_collect_by_id(*, run_id: int, character_id: int, scenario_id: int) -> str:
    run = CollectionRun.objects.select_related("source", "endpoint", "simulator_endpoint").get(
        pk=run_id
    )
    return cell_collect(
        run=run,
        character=Character.objects.get(pk=character_id),
        scenario=Scenario.objects.get(pk=scenario_id),
    )
