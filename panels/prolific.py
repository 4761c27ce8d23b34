"""The one place that calls Prolific's API (https://docs.prolific.com/api-reference/): the
decisions staff take on submissions, bonuses, and the study's state and places.

The token comes from the environment (`PROLIFIC_API_TOKEN`) or a file
(`PROLIFIC_API_TOKEN_FILE`, read at each call so that a rotated token is used at once),
never from the database; it travels only in the `Authorization: Token <token>` header and
is kept out of every message and log line this module writes (and the HTTP library's own
request lines, which never carry headers, are kept at WARNING like collection's).

One policy for every call: 401 and 403 stop at once ("Prolific refused the API token");
429 waits as long as Retry-After says (up to PROLIFIC_API_RETRY_MAX_SECONDS) and tries
again; 5xx, timeouts and dropped connections try again with exponential backoff; after
PROLIFIC_API_ATTEMPTS attempts, or on any other 4xx, a `ProlificError` says what
Prolific answered. Callers change their own records only after a call returned.
"""

import email.utils
import json
import logging
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
from django.conf import settings

logger = logging.getLogger(__name__)
# The HTTP library logs every request at INFO; what matters is logged here, without ids.
logging.getLogger("httpx2").setLevel(logging.WARNING)

# Prolific's categories of a rejection (the `rejection_category` of
# POST /submissions/{id}/transition/), as its API and its own command-line client list them.
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
# Prolific refuses a rejection whose message to the participant is shorter than this.
REJECTION_MESSAGE_MIN_CHARS = 100
# Prolific recommends at most this many submissions per bulk approval.
BULK_APPROVE_MOST = 1000
# Statuses worth another attempt besides 5xx: the request timed out or was throttled.
RETRIED = (408, 429)
ERROR_DETAIL_CHARS = 300


class ProlificError(Exception):
    """Prolific did not do what was asked; `str(error)` is safe to show staff (it never
    holds the token). `status` is Prolific's HTTP status, None when it never answered."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class ProlificTokenError(ProlificError):
    """No token is configured, or Prolific refused it (401, 403): no call can work."""


def api_token() -> str:
    """The token, read now: PROLIFIC_API_TOKEN, else the file PROLIFIC_API_TOKEN_FILE."""
    if settings.PROLIFIC_API_TOKEN:
        return settings.PROLIFIC_API_TOKEN.strip()
    path = settings.PROLIFIC_API_TOKEN_FILE
    if not path:
        raise ProlificTokenError(
            "No Prolific API token: set PROLIFIC_API_TOKEN or PROLIFIC_API_TOKEN_FILE."
        )
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as error:
        raise ProlificTokenError(
            f"The Prolific API token file {path} cannot be read ({error.strerror})."
        ) from None
    if not token:
        raise ProlificTokenError(f"The Prolific API token file {path} is empty.")
    return token


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After in seconds (a number of seconds or an HTTP date), None if absent."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, moment.timestamp() - time.time())


def minor_to_major(amount: int) -> str:
    """Prolific's bonus CSV takes amounts in the study's currency (pounds, dollars), with
    two decimals: 125 minor units are "1.25"."""
    return f"{amount // 100}.{amount % 100:02d}"


def _segment(value: str) -> str:
    """An id placed in a path, escaped whole (a stray "/" or ".." goes nowhere else)."""
    return quote(str(value), safe="")


class ProlificClient:
    def __init__(
        self,
        *,
        base_url: str | None = None,
        token: str | None = None,
        attempts: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx2.BaseTransport | None = None,
    ):
        self.base_url = base_url or settings.PROLIFIC_API_URL
        if not self.base_url.endswith("/"):
            self.base_url += "/"
        self._token = token
        self.attempts = max(1, attempts or settings.PROLIFIC_API_ATTEMPTS)
        self.sleep = sleep
        self.transport = transport

    # Calls ---------------------------------------------------------------------------

    def submissions_approve(self, submission_ids: list[str]) -> None:
        """POST /submissions/bulk-approve/ with the submissions' ids (what Prolific
        recommends over study and participant ids)."""
        ids = list(submission_ids)
        if not ids or len(ids) > BULK_APPROVE_MOST:
            raise ValueError(f"1 to {BULK_APPROVE_MOST} submissions per bulk approval")
        self._call("POST", "submissions/bulk-approve/", {"submission_ids": ids})

    def submission_reject(self, submission_id: str, *, message: str, category: str) -> Any:
        """POST /submissions/{id}/transition/ with action REJECT."""
        return self._call(
            "POST",
            f"submissions/{_segment(submission_id)}/transition/",
            {"action": "REJECT", "message": message, "rejection_category": category},
        )

    def submission_return_request(self, submission_id: str, *, reasons: list[str]) -> Any:
        """POST /submissions/{id}/request-return/: Prolific asks the participant to return
        their submission, giving `reasons` (free text)."""
        return self._call(
            "POST",
            f"submissions/{_segment(submission_id)}/request-return/",
            {"request_return_reasons": list(reasons)},
        )

    def bonuses_create(self, *, study_id: str, bonuses: dict[str, int]) -> str:
        """POST /submissions/bonus-payments/: bonus records (participant id, amount in
        minor units) for the study, not paid yet; the id of the bulk payment."""
        csv = "\n".join(f"{pid},{minor_to_major(amount)}" for pid, amount in bonuses.items())
        created = self._call(
            "POST", "submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv}
        )
        bulk_id = created.get("id") if isinstance(created, dict) else None
        if not isinstance(bulk_id, str) or not bulk_id:
            raise ProlificError("Prolific created the bonuses but gave no id to pay them by.")
        return bulk_id

    def bonuses_pay(self, bulk_id: str) -> None:
        """POST /bulk-bonus-payments/{id}/pay/: pay the bonus records created before."""
        self._call("POST", f"bulk-bonus-payments/{_segment(bulk_id)}/pay/")

    def study_pause(self, study_id: str) -> Any:
        """POST /studies/{id}/transition/ with action PAUSE."""
        return self._call("POST", f"studies/{_segment(study_id)}/transition/", {"action": "PAUSE"})

    def study_start(self, study_id: str) -> Any:
        """POST /studies/{id}/transition/ with action START (a paused study goes on)."""
        return self._call("POST", f"studies/{_segment(study_id)}/transition/", {"action": "START"})

    def study_places_set(self, study_id: str, places: int) -> Any:
        """PATCH /studies/{id}/ with total_available_places (Prolific only increases it)."""
        return self._call(
            "PATCH", f"studies/{_segment(study_id)}/", {"total_available_places": places}
        )

    # One policy for every call --------------------------------------------------------

    def _scrub(self, text: str, token: str) -> str:
        # Prolific's error text is shown to staff; should it ever echo what was sent,
        # the token is taken out.
        return text.replace(token, "[token]") if token else text

    def _call(self, method: str, path: str, body: dict | None = None) -> Any:
        token = self._token or api_token()
        headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
        what = f"{method} {path.split('/', 1)[0]}"
        timeout = settings.PROLIFIC_API_TIMEOUT_SECONDS
        with httpx2.Client(
            base_url=self.base_url, timeout=timeout, transport=self.transport
        ) as client:
            for number in range(1, self.attempts + 1):
                last = number == self.attempts
                try:
                    response = client.request(method, path, json=body, headers=headers)
                except httpx2.TransportError as error:
                    # Timeouts and connection errors; the class says which, never a header.
                    problem = f"no answer ({type(error).__name__})"
                    if last:
                        raise ProlificError(
                            f"Prolific could not be reached: {problem}, after {number} "
                            "attempts. Nothing was changed here; try again later."
                        ) from None
                    self._wait(number, None, what, problem)
                    continue
                status = response.status_code
                if status < 300:
                    return self._decoded(response)
                if status in (401, 403):
                    raise ProlificTokenError(
                        "Prolific refused the API token (HTTP "
                        f"{status}): check PROLIFIC_API_TOKEN or PROLIFIC_API_TOKEN_FILE.",
                        status=status,
                    )
                detail = self._scrub(response.text[:ERROR_DETAIL_CHARS], token)
                if (status in RETRIED or status >= 500) and not last:
                    self._wait(
                        number,
                        retry_after_seconds(response.headers.get("retry-after")),
                        what,
                        f"HTTP {status}",
                    )
                    continue
                if status in RETRIED or status >= 500:
                    raise ProlificError(
                        f"Prolific answered HTTP {status} {number} times; nothing was "
                        f"changed here, try again later. Its last answer: {detail}",
                        status=status,
                    )
                raise ProlificError(f"Prolific refused: HTTP {status}: {detail}", status=status)
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, number: int, retry_after: float | None, what: str, problem: str) -> None:
        cap = settings.PROLIFIC_API_RETRY_MAX_SECONDS
        if retry_after is not None:
            seconds = min(retry_after, cap)
        else:
            base = settings.PROLIFIC_API_RETRY_BASE_SECONDS * 2 ** (number - 1)
            # Jitter spreads the retries of several workers hit by the same outage.
            seconds = min(cap, base) * random.uniform(0.5, 1.0)
        logger.warning(
            "Prolific API %s: %s (attempt %d of %d); trying again in %.1f s",
            what,
            problem,
            number,
            self.attempts,
            seconds,
        )
        self.sleep(seconds)

    @staticmethod
    def _decoded(response: httpx2.Response) -> Any:
        if not response.content:
            return None
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return response.text
