"""Reads of the judges app: which items a run judges and in which order, what is left to
judge, the run's progress, and the figures that compare a judge with the humans."""

from .report import judge_inputs, judge_report
from .runs import (
    JudgeProgress,
    PlannedCall,
    metrics_of_pairs,
    run_items,
    run_missing_calls,
    run_progress,
    runs_of_study,
)

__all__ = [
    "JudgeProgress",
    "PlannedCall",
    "judge_inputs",
    "judge_report",
    "metrics_of_pairs",
    "run_items",
    "run_missing_calls",
    "run_progress",
    "runs_of_study",
]
