"""Writes of the panels app: a study's panel settings and the participants who arrive by
its link. Keyword-only, one transaction each; a refusal raises `PanelError` and changes
nothing.

Callers import from here (`from panels import services`)."""

from .batch import (
    judgments_given,
    participant_admit,
    participant_complete,
    participant_consent,
    participant_time_out,
)
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
from .webhooks import prolific_event_receive

__all__ = [
    "SETTINGS",
    "PanelError",
    "bonuses_pay",
    "completion_link",
    "completion_template_check",
    "judgments_given",
    "panel_configure",
    "panel_pause",
    "panel_places_set",
    "panel_resume",
    "participant_admit",
    "participant_complete",
    "participant_consent",
    "participant_join",
    "participant_return",
    "participant_time_out",
    "participant_time_out_now",
    "participants_overdue_time_out",
    "pid_hash",
    "prolific_event_receive",
    "settings_check",
    "submission_reject",
    "submission_return_ask",
    "submissions_approve",
]
