"""Reads of the judges app: which items a run judges and in which order, what is left to
judge, the run's progress, and the figures that compare a judge with the humans."""

from .display import judge_progress_of_page, judge_runs_of_page
from .report import judge_inputs, judge_report
from .runs import (
    JudgeProgress,
    PlannedCall,
    metrics_of_pairs,
    run_complete,
    run_items,
    run_missing_calls,
    run_progress,
    runs_of_study,
    runs_overview,
)

__all__ = [
    "JudgeProgress",
    "PlannedCall",
    "judge_inputs",
    "judge_progress_of_page",
    "judge_report",
    "judge_runs_of_page",
    "metrics_of_pairs",
    "run_complete",
    "run_items",
    "run_missing_calls",
    "run_progress",
    "runs_of_study",
    "runs_overview",
]
