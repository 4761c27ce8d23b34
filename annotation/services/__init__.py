"""Writes of the annotation domain. Views, commands and tasks call these; they hold the
rules. Every write that must be all-or-nothing runs in one transaction here."""

from .accounts import account_ensure, worker_heartbeat_record
from .errors import AnnotationError
from .judgments import Submission, judgment_submit
from .leases import (
    approved_character_ids,
    assignment_check_active,
    assignment_next,
    assignment_skip,
)
from .quality import flag_resolve, judgment_exclude, low_agreement_flags
from .results import results_refresh, study_recompute
from .screening import (
    MAX_QUIZ_ATTEMPTS,
    QUIZ_LENGTH,
    characters_claim,
    consent_give,
    profile_get_or_create,
    qualification_review,
    quiz_questions,
    quiz_submit,
    screening_pass_mark,
)
from .studies import study_create, study_open, study_set_status

__all__ = [
    "MAX_QUIZ_ATTEMPTS",
    "QUIZ_LENGTH",
    "AnnotationError",
    "Submission",
    "account_ensure",
    "approved_character_ids",
    "assignment_check_active",
    "assignment_next",
    "assignment_skip",
    "characters_claim",
    "consent_give",
    "flag_resolve",
    "judgment_exclude",
    "judgment_submit",
    "leases_expire",
    "low_agreement_flags",
    "profile_get_or_create",
    "qualification_review",
    "quiz_questions",
    "quiz_submit",
    "results_refresh",
    "screening_pass_mark",
    "study_create",
    "study_open",
    "study_recompute",
    "study_set_status",
    "worker_heartbeat_record",
]
