"""Writes of the collection app: runs, the collection of one cell, and staff review.

Keyword-only; a refusal raises `CollectionError` and changes nothing. One module per
concept; callers import from here (`from collection import services`)."""

from .cells import CellOutcome, accept_into_source, cell_collect, cell_collect_by_id
from .errors import CollectionError
from .review import generated_answer_accept, generated_answer_regenerate
from .runs import (
    CELL_COLLECT_TASK,
    RUN_ENQUEUE_TASK,
    run_control,
    run_enqueue,
    run_fail,
    run_finish_if_complete,
    run_start,
    runs_stalled_resume,
)
from .selection import (
    characters_named,
    numbers_as_ranges,
    parse_rounds,
    parse_scenario_numbers,
    scenarios_numbered,
)

__all__ = [
    "CELL_COLLECT_TASK",
    "RUN_ENQUEUE_TASK",
    "CellOutcome",
    "CollectionError",
    "accept_into_source",
    "cell_collect",
    "cell_collect_by_id",
    "characters_named",
    "generated_answer_accept",
    "generated_answer_regenerate",
    "numbers_as_ranges",
    "parse_rounds",
    "parse_scenario_numbers",
    "run_control",
    "run_enqueue",
    "run_fail",
    "run_finish_if_complete",
    "run_start",
    "runs_stalled_resume",
    "scenarios_numbered",
]
