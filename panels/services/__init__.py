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
from .decisions import (
    bonuses_pay,
    panel_pause,
    panel_places_set,
    panel_resume,
    submission_reject,
    submission_return_ask,
    submissions_approve,
)
from .errors import PanelError
from .outcomes import participant_return, participant_time_out_now, participants_overdue_time_out
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
from .webhooks import prolific_event_receive

__all__ = [
    "SETTINGS",
    "PanelError",
    "bonuses_pay",
    "check_answer",
    "check_void",
    "completion_link",
    "completion_template_check",
    "judgments_given",
    "panel_configure",
    "panel_pause",
    "panel_places_set",
    "panel_resume",
    "participant_admit",
    "participant_characters_choose",
    "participant_complete",
    "participant_consent",
    "participant_join",
    "participant_quiz_submit",
    "participant_return",
    "participant_review_refresh",
    "participant_run_out",
    "participant_screening_settle",
    "participant_time_out",
    "participant_time_out_now",
    "participants_overdue_time_out",
    "pid_hash",
    "prolific_event_receive",
    "quiz_characters",
    "quiz_next",
    "settings_check",
    "submission_reject",
    "submission_return_ask",
    "submissions_approve",
]
