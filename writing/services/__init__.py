"""Writes for fan writing: applications, runs, leases on tasks, the two rounds, the user's
follow-up and staff review. Keyword-only, one transaction each; a refusal raises
`WritingError` and changes nothing.

One module per concept; callers import from here (`from writing import services`)."""

from .errors import WritingError
from .followups import (
    followup_next,
    followup_retry,
    followup_simulate,
    followup_submit,
    followups_waiting_resume,
    user_role_character_ids,
)
from .review import task_accept, task_edit, task_return
from .rounds import (
    NEAR_DUPLICATE_RATIO,
    current_task,
    returned_resubmit,
    round_1_submit,
    round_2_submit,
    task_next,
)
from .runs import open_runs, run_create, tasks_create_missing
from .text import NOTE_MAX_CHARS, SAMPLE_MAX_CHARS, clean_text
from .writers import screened_character_ids, writer_apply, writer_character_ids, writer_review

__all__ = [
    "NEAR_DUPLICATE_RATIO",
    "NOTE_MAX_CHARS",
    "SAMPLE_MAX_CHARS",
    "WritingError",
    "clean_text",
    "current_task",
    "followup_next",
    "followup_retry",
    "followup_simulate",
    "followup_submit",
    "followups_waiting_resume",
    "open_runs",
    "returned_resubmit",
    "round_1_submit",
    "round_2_submit",
    "run_create",
    "screened_character_ids",
    "task_accept",
    "task_edit",
    "task_next",
    "task_return",
    "tasks_create_missing",
    "user_role_character_ids",
    "writer_apply",
    "writer_character_ids",
    "writer_review",
]
