"""Reads of the judges app: which items a run judges and in which order, what is left to
judge, the run's progress, and the figures that compare a judge with the humans."""

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
    "metrics_of_pairs",
    "run_items",
    "run_missing_calls",
    "run_progress",
    "runs_of_study",
]
