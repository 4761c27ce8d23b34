"""Writes of the collection app: runs, the collection of one cell, and staff review.

A cell is one character and one scenario of a run: round 1, then the simulated round-2
question reacting to that answer, then round 2 with the whole conversation. Every write
is idempotent, because the same cell can be attempted by a restarted command, a
redelivered task or two workers at once: the database's unique constraints keep one
answer per source, character, scenario and round, and a cell that already has its
answers costs no API call.
"""

import logging
import re

from django.db import IntegrityError, transaction
from django.utils import timezone

from dialogues.importer import source_display_name
from dialogues.models import ROUNDS, SCENARIO_COUNT, Answer, Character, Scenario, Source, SourceKind

from . import guards
from .client import (
    Attempt,
    PermanentCallError,
    RefusedCallError,
    TransientCallError,
    chat_complete,
)
from .models import (
    AnswerEdit,
    ApiCall,
    CallOutcome,
    CallPurpose,
    CellFailure,
    CollectionRun,
    EndpointKeyMissing,
    GeneratedAnswer,
    ModelEndpoint,
    ReviewStatus,
    RunStatus,
    SimulatedFollowup,
)
from .prompts import DEFAULT_SIMULATOR_PROMPT, current_character_prompt, render_character_prompt
from .simulator import EmptyFollowup, simulate_followup

logger = logging.getLogger(__name__)


class CollectionError(Exception):
    """A request the rules refuse; nothing was changed. `code` is stable for tests."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)


def whole_id(value) -> int | None:
    try:
        return int(str(value or "").strip())
    except ValueError:
        return None


# --- choosing what to collect ------------------------------------------------------------


def parse_scenario_numbers(text: str) -> list[int]:
    """`1-60`, `3`, `1-5,9,12-14` -> sorted scenario numbers."""
    numbers: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise CollectionError(
                "bad_scenarios", f"scenarios must look like 1-60 or 1,5,9-12; got {text!r}"
            )
        first, last = int(match[1]), int(match[2] or match[1])
        if first > last or first < 1 or last > SCENARIO_COUNT:
            raise CollectionError(
                "bad_scenarios",
                f"scenario range {part} is outside 1-{SCENARIO_COUNT} or runs backwards",
            )
        numbers.update(range(first, last + 1))
    return sorted(numbers)


def parse_rounds(text: str) -> list[int]:
    try:
        rounds = sorted({int(part) for part in (text or "").split(",")})
    except ValueError:
        rounds = []
    if not rounds or any(r not in ROUNDS for r in rounds):
        raise CollectionError("bad_rounds", f"rounds must be 1, 2 or 1,2; got {text!r}")
    return rounds


def characters_named(names: list[str] | None) -> list[Character]:
    """Characters by key (《作品》的角色), Chinese name or English name; all when None."""
    if not names:
        characters = list(Character.objects.order_by("id"))
        if not characters:
            raise CollectionError(
                "no_characters", "there are no characters yet; import a ChatAnime file first"
            )
        return characters
    found, unknown = [], []
    for name in names:
        name = name.strip()
        match = (
            Character.objects.filter(key=name).first()
            or Character.objects.filter(name_zh=name).first()
            or Character.objects.filter(name_en__iexact=name).exclude(name_en="").first()
        )
        (found if match else unknown).append(match or name)
    if unknown:
        raise CollectionError("unknown_character", f"unknown character(s): {', '.join(unknown)}")
    return list(dict.fromkeys(found))


def scenarios_numbered(numbers: list[int]) -> list[Scenario]:
    scenarios = list(Scenario.objects.filter(number__in=numbers).order_by("number"))
    missing = sorted(set(numbers) - {s.number for s in scenarios})
    if missing:
        raise CollectionError(
            "unknown_scenario",
            f"scenario(s) {', '.join(map(str, missing))} are not in the database; "
            "import the ChatAnime scenarios first",
        )
    return scenarios


def run_start(
    *,
    source_slug: str,
    endpoint: ModelEndpoint,
    simulator_endpoint: ModelEndpoint,
    characters: list[Character],
    scenarios: list[Scenario],
    rounds: list[int],
    simulator_prompt: str = "",
    created_by=None,
) -> CollectionRun:
    """Continue the source's unfinished run with this selection, or start a new one.
    Both endpoints' keys are read first, so a missing key creates nothing."""
    for each in (endpoint, simulator_endpoint):
        try:
            each.api_key()
        except EndpointKeyMissing as error:
            raise CollectionError("missing_key", str(error)) from None
    with transaction.atomic():
        source = Source.objects.filter(slug=source_slug).first()
        if source is not None and source.kind != SourceKind.LLM:
            raise CollectionError(
                "human_source", f"source {source_slug!r} holds human answers; choose another slug"
            )
        if source is None:
            source = Source.objects.create(
                slug=source_slug, kind=SourceKind.LLM, display_name=source_display_name(source_slug)
            )
        run = (
            CollectionRun.objects.select_for_update()
            .filter(
                source=source, status__in=(RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.FAILED)
            )
            .first()
        )
        fields = {
            "endpoint": endpoint,
            "simulator_endpoint": simulator_endpoint,
            "simulator_prompt": simulator_prompt or DEFAULT_SIMULATOR_PROMPT,
            "scenario_numbers": [s.number for s in scenarios],
            "rounds": rounds,
            "status": RunStatus.RUNNING,
            "error": "",
            "finished_at": None,
        }
        if run is None:
            run = CollectionRun.objects.create(source=source, created_by=created_by, **fields)
        else:
            for name, value in fields.items():
                setattr(run, name, value)
            run.save()
        run.characters.set(characters)
    return run


# --- collecting one cell -----------------------------------------------------------------


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


def _accept_into_source(generated: GeneratedAnswer) -> None:
    """The accepted text becomes the source's `dialogues.Answer`, like an imported one."""
    answer, _ = Answer.objects.update_or_create(
        character=generated.character,
        scenario=generated.scenario,
        source=generated.source,
        round=generated.round,
        defaults={"question": generated.question, "text": generated.text},
    )
    generated.answer = answer


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
                _accept_into_source(generated)
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


# --- run status --------------------------------------------------------------------------


def run_fail(*, run: CollectionRun, error: str) -> None:
    CollectionRun.objects.filter(pk=run.pk).exclude(status=RunStatus.CANCELLED).update(
        status=RunStatus.FAILED, error=error[:4000]
    )
    run.refresh_from_db(fields=["status", "error"])
    logger.warning("collection run %s failed: %s", run.pk, error)


def run_finish_if_complete(*, run: CollectionRun) -> bool:
    from .selectors import run_missing_cells

    if run_missing_cells(run):
        return False
    CollectionRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
        status=RunStatus.FINISHED, finished_at=timezone.now()
    )
    run.refresh_from_db(fields=["status", "finished_at"])
    return run.status == RunStatus.FINISHED


_TRANSITIONS = {
    "pause": ({RunStatus.RUNNING}, RunStatus.PAUSED),
    "resume": ({RunStatus.PAUSED, RunStatus.FAILED}, RunStatus.RUNNING),
    "cancel": ({RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.FAILED}, RunStatus.CANCELLED),
}


def run_control(*, run: CollectionRun, action: str) -> CollectionRun:
    """Pause, resume or cancel. Cells in flight finish their current call and stop; the
    answers collected so far stay. Resuming enqueues the missing cells again."""
    if action not in _TRANSITIONS:
        raise CollectionError("bad_action", f"unknown action {action!r}")
    allowed_from, to = _TRANSITIONS[action]
    with transaction.atomic():
        run = CollectionRun.objects.select_for_update().get(pk=run.pk)
        if run.status not in allowed_from:
            raise CollectionError(
                "bad_transition", f"a {run.get_status_display().lower()} run cannot be {action}d"
            )
        run.status = to
        if to == RunStatus.RUNNING:
            run.error = ""
        run.save(update_fields=["status", "error"])
        if to == RunStatus.RUNNING:
            run_enqueue(run=run)
    return run


def run_enqueue(*, run: CollectionRun) -> None:
    """Hand the run's missing cells to the workers once the transaction commits."""
    from .tasks import collection_run_enqueue

    collection_run_enqueue.delay_on_commit(run.pk)


# --- staff review ------------------------------------------------------------------------


def _audit(*, generated_answer: GeneratedAnswer, editor, action: str, **texts) -> AnswerEdit:
    return AnswerEdit.objects.create(
        generated_answer=generated_answer,
        run=generated_answer.run,
        cell=str(generated_answer),
        editor=editor if editor is not None and editor.is_authenticated else None,
        action=action,
        **texts,
    )


def _flagged(generated: GeneratedAnswer) -> GeneratedAnswer:
    generated = GeneratedAnswer.objects.select_for_update().get(pk=generated.pk)
    if generated.review_status != ReviewStatus.FLAGGED:
        raise CollectionError("not_flagged", "this answer is not waiting for review")
    return generated


def generated_answer_accept(*, generated: GeneratedAnswer, by, text: str | None = None):
    """Accept a flagged answer as it is or with staff's edit (audited)."""
    with transaction.atomic():
        generated = _flagged(generated)
        if text is not None:
            text = text.replace("\x00", "").strip()
            if not text:
                raise CollectionError("empty_text", "an accepted answer cannot be empty")
            if text != generated.text:
                _audit(
                    generated_answer=generated,
                    editor=by,
                    action="edit",
                    text_before=generated.text,
                    text_after=text,
                )
                generated.text = text
        _audit(generated_answer=generated, editor=by, action="accept")
        generated.review_status = ReviewStatus.ACCEPTED
        generated.reviewed_at = timezone.now()
        generated.reviewed_by = by
        _accept_into_source(generated)
        generated.save()
    return generated


def generated_answer_regenerate(*, generated: GeneratedAnswer, by) -> None:
    """Discard a flagged answer and ask the model again. A round-1 answer is the context
    of round 2, so its round 2 and follow-up go too, unless round 2 was already accepted."""
    with transaction.atomic():
        generated = _flagged(generated)
        cell = {
            "source": generated.source,
            "character": generated.character,
            "scenario": generated.scenario,
        }
        if generated.round == 1:
            second = GeneratedAnswer.objects.filter(round=2, **cell).first()
            if second is not None and second.review_status == ReviewStatus.ACCEPTED:
                raise CollectionError(
                    "round_2_accepted",
                    "round 2 of this dialogue is already accepted; it answers this round-1 text",
                )
            if second is not None:
                second.delete()
            SimulatedFollowup.objects.filter(**cell).delete()
        _audit(
            generated_answer=generated, editor=by, action="regenerate", text_before=generated.text
        )
        generated.delete()
        run = generated.run
        if run.status in (RunStatus.FINISHED, RunStatus.CANCELLED, RunStatus.FAILED):
            run.status = RunStatus.RUNNING
            run.finished_at = None
            run.save(update_fields=["status", "finished_at"])
        from .tasks import collection_cell_collect

        collection_cell_collect.delay_on_commit(
            run.pk, generated.character_id, generated.scenario_id
        )
