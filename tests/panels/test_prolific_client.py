"""The Prolific API client against a local server that plays Prolific: the paths and
bodies of Prolific's API reference, the token in its header and nowhere else, and one
policy for errors (a refused token stops at once, 429 waits as Retry-After says, 5xx and
dropped connections are tried again a bounded number of times, then a clear error)."""

import logging

import pytest

from panels import prolific
from tests.fixtures.prolific import TOKEN
from tests.helpers import PRODUCTION_ENV, run_manage


@pytest.fixture
def waits():
    return []


@pytest.fixture
def client(prolific_server, waits):
    return prolific.ProlificClient(sleep=waits.append)


def test_each_call_goes_to_the_path_prolific_documents_with_the_token(client, prolific_server):
    client.submissions_approve(["sub-1", "sub-2"])
    client.submission_reject("sub-3", message="m" * 100, category="LOW_EFFORT")
    client.submission_return_request("sub-4", reasons=["The page broke."])
    bulk_id = client.bonuses_create(study_id="study-9", bonuses={"pid-1": 125, "pid-2": 5})
    client.bonuses_pay(bulk_id)
    client.study_pause("study-9")
    client.study_start("study-9")
    client.study_places_set("study-9", 40)

    assert prolific_server.paths() == [
        "POST /api/v1/submissions/bulk-approve/",
        "POST /api/v1/submissions/sub-3/transition/",
        "POST /api/v1/submissions/sub-4/request-return/",
        "POST /api/v1/submissions/bonus-payments/",
        "POST /api/v1/bulk-bonus-payments/bonus-1/pay/",
        "POST /api/v1/studies/study-9/transition/",
        "POST /api/v1/studies/study-9/transition/",
        "PATCH /api/v1/studies/study-9/",
    ]
    bodies = [call.body for call in prolific_server.calls]
    assert bodies[0] == {"submission_ids": ["sub-1", "sub-2"]}
    assert bodies[1] == {
        "action": "REJECT",
        "message": "m" * 100,
        "rejection_category": "LOW_EFFORT",
    }
    assert bodies[2] == {"request_return_reasons": ["The page broke."]}
    assert bodies[3] == {"study_id": "study-9", "csv_bonuses": "pid-1,1.25\npid-2,0.05"}
    assert bodies[4] is None
    assert bodies[5] == {"action": "PAUSE"} and bodies[6] == {"action": "START"}
    assert bodies[7] == {"total_available_places": 40}
    assert all(call.authorised for call in prolific_server.calls)


def test_an_id_cannot_reach_another_path(client, prolific_server):
    client.study_pause("../submissions/x")
    assert prolific_server.paths() == ["POST /api/v1/studies/..%2Fsubmissions%2Fx/transition/"]


@pytest.mark.parametrize("behaviour, status", [("unauthorized", 401), ("forbidden", 403)])
def test_a_refused_token_is_a_clear_error_at_once(
    client, prolific_server, waits, behaviour, status
):
    prolific_server.script(behaviour)
    with pytest.raises(prolific.ProlificTokenError) as refused:
        client.study_pause("study-9")
    assert "Prolific refused the API token" in str(refused.value)
    assert refused.value.status == status
    assert len(prolific_server.calls) == 1 and waits == []


def test_a_wrong_token_is_refused_by_prolific(prolific_server, settings, waits):
    settings.PROLIFIC_API_TOKEN = "not-the-token"
    with pytest.raises(prolific.ProlificTokenError):
        prolific.ProlificClient(sleep=waits.append).study_pause("study-9")
    assert prolific_server.calls[0].authorised is False


def test_a_429_waits_as_long_as_retry_after_says_then_succeeds(
    client, prolific_server, waits, settings
):
    settings.PROLIFIC_API_RETRY_MAX_SECONDS = 60
    prolific_server.script(("rate_limited", 7), ("rate_limited", 2))
    client.study_pause("study-9")
    assert waits == [7.0, 2.0]
    assert len(prolific_server.calls) == 3


def test_a_long_retry_after_is_capped(client, prolific_server, waits, settings):
    settings.PROLIFIC_API_RETRY_MAX_SECONDS = 5
    prolific_server.script(("rate_limited", 3600))
    client.study_pause("study-9")
    assert waits == [5]


def test_throttling_that_never_ends_stops_after_the_attempts(
    client, prolific_server, waits, settings
):
    settings.PROLIFIC_API_ATTEMPTS = 3
    prolific_server.script(*[("rate_limited", 0)] * 5)
    with pytest.raises(prolific.ProlificError) as failed:
        prolific.ProlificClient(sleep=waits.append).study_pause("study-9")
    assert failed.value.status == 429
    assert "429 3 times" in str(failed.value)
    assert len(prolific_server.calls) == 3 and len(waits) == 2


def test_server_errors_are_tried_again_with_growing_waits_then_succeed(
    client, prolific_server, waits, settings
):
    settings.PROLIFIC_API_RETRY_BASE_SECONDS = 1
    settings.PROLIFIC_API_RETRY_MAX_SECONDS = 60
    prolific_server.script("server_error", "server_error", "server_error")
    client.submissions_approve(["sub-1"])
    assert len(prolific_server.calls) == 4
    # Exponential backoff with jitter: 1, 2, 4 seconds, each between half and all of it.
    assert [0.5 <= wait / base <= 1 for wait, base in zip(waits, [1, 2, 4], strict=True)] == [
        True
    ] * 3


def test_server_errors_that_last_end_in_a_clear_error(client, prolific_server, waits):
    prolific_server.script(*["server_error"] * 10)
    with pytest.raises(prolific.ProlificError) as failed:
        client.study_start("study-9")
    assert failed.value.status == 500
    assert "try again later" in str(failed.value)
    assert len(prolific_server.calls) == 4  # PROLIFIC_API_ATTEMPTS


def test_a_dropped_connection_is_tried_again(client, prolific_server, waits):
    prolific_server.script("drop")
    client.study_start("study-9")
    assert len(prolific_server.calls) == 2 and len(waits) == 1


def test_an_unreachable_prolific_ends_in_a_clear_error(settings, waits):
    settings.PROLIFIC_API_TOKEN = TOKEN
    settings.PROLIFIC_API_URL = "http://127.0.0.1:9/api/v1/"  # the discard port: refused
    settings.PROLIFIC_API_ATTEMPTS = 2
    with pytest.raises(prolific.ProlificError) as failed:
        prolific.ProlificClient(sleep=waits.append).study_start("study-9")
    assert "could not be reached" in str(failed.value)
    assert failed.value.status is None and len(waits) == 1


def test_another_refusal_says_what_prolific_answered_without_trying_again(
    client, prolific_server, waits
):
    prolific_server.script(("bad_request", "You cannot decrease the places."))
    with pytest.raises(prolific.ProlificError) as refused:
        client.study_places_set("study-9", 3)
    assert "HTTP 400" in str(refused.value)
    assert "You cannot decrease the places." in str(refused.value)
    assert len(prolific_server.calls) == 1 and waits == []


def test_the_token_can_come_from_a_file(prolific_server, settings, tmp_path, waits):
    token_file = tmp_path / "prolific-token"
    token_file.write_text(f"{TOKEN}\n")
    settings.PROLIFIC_API_TOKEN = ""
    settings.PROLIFIC_API_TOKEN_FILE = str(token_file)
    prolific.ProlificClient(sleep=waits.append).study_pause("study-9")
    assert prolific_server.calls[0].authorised


@pytest.mark.parametrize("problem", ["unset", "missing file", "empty file"])
def test_a_missing_token_is_a_clear_error_and_nothing_is_sent(
    prolific_server, settings, tmp_path, problem
):
    settings.PROLIFIC_API_TOKEN = ""
    settings.PROLIFIC_API_TOKEN_FILE = ""
    if problem == "missing file":
        settings.PROLIFIC_API_TOKEN_FILE = str(tmp_path / "absent")
    elif problem == "empty file":
        (tmp_path / "empty").write_text("\n")
        settings.PROLIFIC_API_TOKEN_FILE = str(tmp_path / "empty")
    with pytest.raises(prolific.ProlificTokenError) as missing:
        prolific.ProlificClient().study_pause("study-9")
    assert "token" in str(missing.value)
    assert prolific_server.calls == []


def test_the_token_is_never_logged_nor_in_an_error(client, prolific_server, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("httpx2", "httpcore2", "panels"):
        caplog.set_level(logging.DEBUG, logger=name)
    prolific_server.script(("rate_limited", 0), "server_error", "drop")
    client.study_pause("study-9")
    prolific_server.script(("bad_request", f"echoing Token {TOKEN}"), "unauthorized")
    errors = []
    for call in (lambda: client.study_start("study-9"), lambda: client.study_start("study-9")):
        with pytest.raises(prolific.ProlificError) as failed:
            call()
        errors.append(str(failed.value))

    assert caplog.records, "the retries were logged"
    assert TOKEN not in caplog.text
    assert all(TOKEN not in error for error in errors)
    assert "[token]" in errors[0]


def test_amounts_go_to_prolific_in_pounds_and_pence():
    assert [prolific.minor_to_major(amount) for amount in (1, 50, 100, 1234)] == [
        "0.01",
        "0.50",
        "1.00",
        "12.34",
    ]


def test_a_token_and_a_token_file_both_set_stop_the_site_at_start_up(tmp_path):
    secret = "a-token-that-must-not-be-printed"
    result = run_manage(
        "check",
        env={
            **PRODUCTION_ENV,
            "PROLIFIC_API_TOKEN": secret,
            "PROLIFIC_API_TOKEN_FILE": str(tmp_path / "token"),
        },
    )
    assert result.returncode != 0
    assert "PROLIFIC_API_TOKEN or PROLIFIC_API_TOKEN_FILE, not both" in result.stderr
    assert secret not in result.stderr + result.stdout
