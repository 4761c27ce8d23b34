"""Driving a judge run to the end from one process (the `judge_study` command).

Calls run on as many threads as the endpoint's concurrency (`common.passes`); the
collection app's per-endpoint limiter still holds the concurrency and the rate across
processes. Killed at any moment, the run keeps only whole verdicts (each call's row and
ratings are written in one transaction), and the next start judges only what has no
verdict yet.
"""

from collections.abc import Callable
from dataclasses import dataclass

from common.passes import Units, do_missing

from . import services
from .models import JudgeRun, JudgeRunStatus
from .selectors import PlannedCall, run_missing_calls


@dataclass
class RunResult:
    status: str
    error: str
    failed_calls: int


def run_to_end(run: JudgeRun, *, on_call: Callable[[str], None] | None = None) -> RunResult:
    def judge(call: PlannedCall) -> str:
        # A run paused or cancelled on the judges' page stops before its next call, as
        # the workers' queued calls do.
        if JudgeRun.objects.filter(pk=run.pk).exclude(status=JudgeRunStatus.RUNNING).exists():
            return services.CallOutcome.STOPPED
        # One run for every thread: what a call learns of the server (structured output
        # or not) holds for the calls after it.
        return services.judge_call(run=run, planned=call)

    def still_running() -> bool:
        run.refresh_from_db()
        return run.status == JudgeRunStatus.RUNNING

    failed = do_missing(
        Units(
            missing=lambda: run_missing_calls(run),
            do=judge,
            failed=services.CallOutcome.FAILED,
            stopping=frozenset({services.CallOutcome.PERMANENT, services.CallOutcome.STOPPED}),
            concurrency=lambda: run.endpoint.concurrency,
            still_running=still_running,
            thread_name="judge",
        ),
        on_outcome=on_call,
    )
    services.run_finish_if_complete(run=run)
    run.refresh_from_db()
    return RunResult(status=run.status, error=run.error, failed_calls=failed)
