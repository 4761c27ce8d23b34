"""Writes of the panels app: a study's panel settings, the participants who arrive by
its link, their screening and the end of their batch. Keyword-only, one transaction
each; a refusal raises `PanelError` and changes nothing.

Callers import from here (`from panels import services`)."""

from .batch import (
    judgments_given,
    participant_admit,
    participant_complete,
    participant_consent,
    participant_time_out,
)
from .checks import check_answer, check_void
from .configuration import SETTINGS, completion_template_check, panel_configure, settings_check
from .errors import PanelError
from .participants import completion_link, participant_join, pid_hash
from .review import participant_review_refresh
from .screening import (
    participant_characters_choose,
    participant_quiz_submit,
    participant_run_out,
    participant_screening_settle,
    quiz_characters,
    quiz_next,
)

__all__ = [
    "SETTINGS",
    "PanelError",
    "check_answer",
    "check_void",
    "completion_link",
    "completion_template_check",
    "judgments_given",
    "panel_configure",
    "participant_admit",
    "participant_characters_choose",
    "participant_complete",
    "participant_consent",
    "participant_join",
    "participant_quiz_submit",
    "participant_review_refresh",
    "participant_run_out",
    "participant_screening_settle",
    "participant_time_out",
    "pid_hash",
    "quiz_characters",
    "quiz_next",
    "settings_check",
]
