"""The one place that calls an OpenAI-compatible chat-completions API.

We use the official `openai` client (it speaks every server that copies the protocol:
hosted APIs, vLLM, llama.cpp's server, Ollama) with its own retries switched off, so that
every attempt is limited, measured and recorded here, and so that "retry" and "give up"
follow one policy: 429, 5xx, timeouts, dropped connections and unreadable replies are
transient and retried with exponential backoff (honouring Retry-After); a bad key, an
unknown model or a rejected request is permanent and stops at once.
"""

import email.utils
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import openai
from django.conf import settings

from .limiter import endpoint_call_permit


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: int
    model: str


@dataclass(frozen=True)
class Attempt:
    """What one HTTP attempt did, for the caller to record."""

    ok: bool
    transient: bool
    latency_ms: int
    status_code: int | None = None
    error: str = ""
    completion: Completion | None = None
    retry_after: float | None = None


class CallFailed(Exception):
    def __init__(self, message: str, *, status_code: int | None = None):
        super().__init__(message)
        self.status_code = status_code


class TransientCallError(CallFailed):
    """Retries ran out on errors that might pass; trying the same cell later may work."""


class PermanentCallError(CallFailed):
    """The endpoint refuses every request (bad key, no access, unknown model): stop the run."""


class RefusedCallError(CallFailed):
    """The endpoint refuses this one request (400, 422: a content filter, a prompt too
    long): retrying it cannot help, but other dialogues may still be collected."""


# Statuses that say the endpoint itself is unusable, whatever the request.
ENDPOINT_UNUSABLE = (401, 402, 403, 404)


# The HTTP library logs every request at INFO; our ApiCall rows already record each one.
logging.getLogger("httpx2").setLevel(logging.WARNING)

_clients: dict[tuple, openai.OpenAI] = {}
_clients_lock = threading.Lock()


def _client_for(endpoint) -> openai.OpenAI:
    # One client (and its connection pool) per endpoint configuration and process.
    key = (endpoint.base_url, endpoint.api_key(), endpoint.timeout_seconds)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = openai.OpenAI(
                base_url=endpoint.base_url,
                api_key=key[1],
                timeout=endpoint.timeout_seconds,
                max_retries=0,
            )
        return _clients[key]


def _retry_after_seconds(response) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        moment = email.utils.parsedate_to_datetime(value)
        return max(0.0, moment.timestamp() - time.time()) if moment else None


def _describe(error: Exception) -> str:
    # Never the request (it may carry the key in headers): the class and the server's words.
    message = getattr(error, "message", None) or str(error)
    return f"{type(error).__name__}: {message}"[:2000]


def call_once(*, endpoint, messages: list[dict], extra: dict | None = None) -> Attempt:
    """One attempt, classified. Raises only if the endpoint's key cannot be read.
    `extra` adds request parameters (a judge's `response_format`)."""
    client = _client_for(endpoint)
    parameters: dict = {"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens}
    if endpoint.top_p is not None:
        parameters["top_p"] = endpoint.top_p
    parameters.update(extra or {})
    started = time.perf_counter()

    def elapsed() -> int:
        return int((time.perf_counter() - started) * 1000)

    try:
        reply = client.chat.completions.create(
            model=endpoint.model, messages=messages, **parameters
        )
        choice = reply.choices[0]
        content = choice.message.content or ""
    except openai.APIStatusError as error:
        status = error.status_code
        transient = status in (408, 409, 429) or status >= 500
        return Attempt(
            ok=False,
            transient=transient,
            latency_ms=elapsed(),
            status_code=status,
            error=_describe(error),
            retry_after=_retry_after_seconds(error.response),
        )
    except (openai.APIConnectionError, openai.APIResponseValidationError) as error:
        # APITimeoutError is an APIConnectionError.
        return Attempt(ok=False, transient=True, latency_ms=elapsed(), error=_describe(error))
    except (ValueError, AttributeError, IndexError, TypeError) as error:
        # A 200 whose body is not a chat completion (malformed JSON, no choices).
        return Attempt(
            ok=False,
            transient=True,
            latency_ms=elapsed(),
            status_code=200,
            error=f"unreadable reply: {_describe(error)}",
        )
    usage = getattr(reply, "usage", None)
    completion = Completion(
        text=content.strip(),
        finish_reason=choice.finish_reason or "",
        tokens_in=getattr(usage, "prompt_tokens", None),
        tokens_out=getattr(usage, "completion_tokens", None),
        latency_ms=elapsed(),
        model=reply.model or endpoint.model,
    )
    return Attempt(
        ok=True, transient=False, latency_ms=completion.latency_ms, completion=completion
    )


def backoff_seconds(attempt_number: int, retry_after: float | None = None) -> float:
    cap = settings.COLLECTION_RETRY_MAX_SECONDS
    if retry_after is not None:
        return min(retry_after, cap)
    base = settings.COLLECTION_RETRY_BASE_SECONDS * 2 ** (attempt_number - 1)
    # Jitter spreads the retries of many workers hit by the same outage.
    return min(cap, base) * random.uniform(0.5, 1.0)


def chat_complete(
    *,
    endpoint,
    messages: list[dict],
    on_attempt: Callable[[Attempt, bool], None] | None = None,
    attempts: int | None = None,
    extra: dict | None = None,
) -> Completion:
    """Call the endpoint within its limits until it answers, retrying transient errors.
    `on_attempt(attempt, will_retry)` hears about every attempt, so callers can record it.

    Raises TransientCallError when the retries run out, PermanentCallError when the
    endpoint refuses everything, RefusedCallError when it refuses this request, and
    models.EndpointKeyMissing when the key cannot be read.
    """
    attempts = attempts or settings.COLLECTION_RETRY_ATTEMPTS
    for number in range(1, attempts + 1):
        with endpoint_call_permit(endpoint):
            attempt = call_once(endpoint=endpoint, messages=messages, extra=extra)
        will_retry = not attempt.ok and attempt.transient and number < attempts
        if on_attempt is not None:
            on_attempt(attempt, will_retry)
        if attempt.ok:
            return attempt.completion
        if not attempt.transient:
            error_class = (
                PermanentCallError if attempt.status_code in ENDPOINT_UNUSABLE else RefusedCallError
            )
            raise error_class(
                f"{endpoint.base_url} model {endpoint.model}: {attempt.error}",
                status_code=attempt.status_code,
            )
        if number < attempts:
            time.sleep(backoff_seconds(number, attempt.retry_after))
    raise TransientCallError(
        f"gave up after {attempts} attempts: {attempt.error}", status_code=attempt.status_code
    )
