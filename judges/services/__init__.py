"""Writes of the judges app: runs and the calls that judge one item in one order.

Keyword-only; a refusal raises `JudgeError` and changes nothing. Callers import from here
(`from judges import services`)."""

from .calls import CallOutcome, judge_call
from .errors import JudgeError
from .figures import run_figures_refresh, runs_figures_catch_up, study_judges_refresh
from .runs import (
    CALL_TASK,
    RUN_ENQUEUE_TASK,
    run_control,
    run_enqueue,
    run_fail,
    run_finish_if_complete,
    run_start,
)

__all__ = [
    "CALL_TASK",
    "RUN_ENQUEUE_TASK",
    "CallOutcome",
    "JudgeError",
    "judge_call",
    "run_control",
    "run_enqueue",
    "run_fail",
    "run_figures_refresh",
    "run_finish_if_complete",
    "run_start",
    "runs_figures_catch_up",
    "study_judges_refresh",
]
