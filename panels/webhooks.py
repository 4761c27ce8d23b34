"""Prolific's signed status webhooks, checked before anything is believed: pure functions
of the secret, the headers, the raw body and the clock (no database, no settings), so
that every refusal can be tested on its own.

What Prolific documents (docs.prolific.com/api-reference/webhooks/):
- "Verifying": each request carries X-Prolific-Request-Signature and
  X-Prolific-Request-Timestamp (a UNIX time); the signature is the base64 of the
  HMAC-SHA256, under the workspace's secret, of the timestamp followed by the body.
- "Idempotency and the X-Event-ID Header": X-Event-ID is unique per event and stays the
  same when Prolific delivers the event again (delivery is at least once).
- "Receiving": a `submission.status.change` event is the JSON object
  {"resource_id": <the submission's id, our SESSION_ID>, "event_type":
  "submission.status.change", "participant_id": <the PROLIFIC_PID>, "status": <the new
  status>}.
- "Handling event order with X-Timestamp": events may arrive out of order.

What it leaves open, and what we chose:
- How old a request may be: five minutes either way, after which a captured request can
  no longer be replayed (`MAX_AGE_SECONDS`).
- The exact bytes signed: Prolific's own Python example signs `json.dumps(body)` of the
  parsed body, which is the raw body when it was written by Python's `json.dumps`. We
  accept a signature of the raw body, or failing that of that re-serialisation, so that
  a body sent with other spacing is not refused; both need the secret.
- How large a body may be: 64 KiB, far above the few hundred bytes an event has.
"""

import base64
import hashlib
import hmac
import json
import math
from dataclasses import dataclass

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
MAX_BODY_BYTES = 64 * 1024
MAX_AGE_SECONDS = 5 * 60
SUBMISSION_STATUS_CHANGE = "submission.status.change"
# Longest accepted values: what the `WebhookEvent` row and a participant's ids hold.
MOST_CHARS = {"event_id": 128, "event_type": 64, "resource_id": 64, "status": 32, "participant": 64}


class WebhookRefused(Exception):
    """The request is not believed, or not understood; `status` is the HTTP answer, and
    `reason` says why in a few words (never the secret or the signature expected)."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class StatusEvent:
    event_id: str
    event_type: str
    resource_id: str
    status: str
    participant_id: str


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """What Prolific sends: base64(HMAC-SHA256(secret, timestamp + body))."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def _signed(secret: str, timestamp: str, signed_bodies: list[bytes], given: str) -> bool:
    try:
        given_bytes = given.encode("ascii")
    except UnicodeEncodeError:
        return False
    return any(
        hmac.compare_digest(signature(secret, timestamp, body).encode(), given_bytes)
        for body in signed_bodies
    )


def _text(value, name: str, *, optional: bool = False) -> str:
    if optional and value in (None, ""):
        return ""
    if not isinstance(value, str) or not value or len(value) > MOST_CHARS[name]:
        raise WebhookRefused(400, f"malformed event: {name}")
    if any(ord(char) < 32 for char in value):
        raise WebhookRefused(400, f"malformed event: {name}")
    return value


def verified_event(*, secret: str, headers, body: bytes, now: float) -> StatusEvent:
    """The event in a request Prolific signed within the last five minutes, or
    `WebhookRefused`: 413 for a body too large, 403 for a missing, wrong or stale
    signature, 400 for what is signed but not an event we can read."""
    if not secret:
        raise ValueError("no webhook secret")
    if len(body) > MAX_BODY_BYTES:
        raise WebhookRefused(413, "body too large")
    given = headers.get(SIGNATURE_HEADER) or ""
    timestamp = headers.get(TIMESTAMP_HEADER) or ""
    if not given or not timestamp:
        raise WebhookRefused(403, "missing signature")
    try:
        sent_at = float(timestamp)
    except ValueError:
        raise WebhookRefused(403, "malformed timestamp") from None
    if not math.isfinite(sent_at) or abs(now - sent_at) > MAX_AGE_SECONDS:
        raise WebhookRefused(403, "stale timestamp")
    try:
        parsed = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        parsed = None
    signed_bodies = [body]
    if parsed is not None:
        signed_bodies.append(json.dumps(parsed).encode())
    if not _signed(secret, timestamp, signed_bodies, given):
        raise WebhookRefused(403, "bad signature")
    # Signed by Prolific: from here on a refusal is a body we cannot read, not a forgery.
    if not isinstance(parsed, dict):
        raise WebhookRefused(400, "malformed body")
    event_type = _text(parsed.get("event_type"), "event_type")
    submission = event_type == SUBMISSION_STATUS_CHANGE
    return StatusEvent(
        event_id=_text(headers.get(EVENT_ID_HEADER), "event_id"),
        event_type=event_type,
        resource_id=_text(parsed.get("resource_id"), "resource_id"),
        status=_text(parsed.get("status"), "status", optional=not submission),
        participant_id=_text(parsed.get("participant_id"), "participant", optional=True),
    )
