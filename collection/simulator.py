"""The user simulator: an LLM playing the user, writing the round-2 follow-up that
reacts to one responder's round-1 answer (so every source gets its own round-2 question)."""

from collections.abc import Callable
from dataclasses import dataclass

from dialogues.models import Character

from .client import Attempt, chat_complete
from .models import ModelEndpoint
from .prompts import DEFAULT_SIMULATOR_PROMPT, render_simulator_prompt


@dataclass(frozen=True)
class SimulatedTurn:
    text: str
    prompt: str
    model: str
    finish_reason: str
    latency_ms: int
    tokens_in: int | None
    tokens_out: int | None


class EmptyFollowup(Exception):
    """The simulator returned nothing usable as a user message."""


def simulate_followup(
    *,
    endpoint: ModelEndpoint,
    character: Character,
    question_r1: str,
    answer_r1: str,
    prompt: str | None = None,
    on_attempt: Callable[[Attempt, bool], None] | None = None,
) -> SimulatedTurn:
    """Ask the simulator endpoint for the user's next message.

    `prompt` is a template with {work} {name} {question} {answer}; the default is
    DEFAULT_SIMULATOR_PROMPT. Raises the errors of `client.chat_complete`, and
    EmptyFollowup when the reply is empty (it would make round 2 meaningless).
    """
    rendered = render_simulator_prompt(
        prompt or DEFAULT_SIMULATOR_PROMPT,
        character=character,
        question=question_r1,
        answer=answer_r1,
    )
    completion = chat_complete(
        endpoint=endpoint,
        messages=[
            {"role": "system", "content": rendered},
            {"role": "user", "content": "请写出用户的下一句话。"},
        ],
        on_attempt=on_attempt,
    )
    text = completion.text.strip().strip('"“”「」')
    if not text:
        raise EmptyFollowup(f"the user simulator ({endpoint.name}) returned an empty follow-up")
    return SimulatedTurn(
        text=text,
        prompt=rendered,
        model=completion.model,
        finish_reason=completion.finish_reason,
        latency_ms=completion.latency_ms,
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
    )
