"""Writes of the annotation domain. Views, commands and tasks call these; they hold the
rules. Every write that must be all-or-nothing runs in one transaction here."""

from .accounts import account_ensure, worker_heartbeat_record
from .annotators import (
    annotator_reinstate,
    annotator_suspend,
    membership_add,
    membership_cap_set,
    membership_remove,
    memberships_add,
)
from .errors import AnnotationError
from .exports import (
    export_job_killed,
    export_job_request,
    export_job_run,
    export_jobs_tidy,
    manifest_name,
)
from .judgments import Submission, judgment_submit
from .leases import (
    assignment_check_active,
    assignment_next,
    assignment_skip,
    lease_check,
)
from .quality import flag_resolve, judgment_decide, judgment_exclude, low_agreement_flags
from .quizzes import (
    BUNDLED_QUIZZES,
    QuizFileInvalid,
    QuizLoadReport,
    quiz_file_read,
    screening_questions_load,
)
from .refreshes import open_studies_refresh, study_results_refresh_request
from .results import results_refresh, study_recompute
from .screening import (
    MAX_QUIZ_ATTEMPTS,
    QUIZ_LENGTH,
    characters_claim,
    characters_with_quiz_ids,
    consent_give,
    profile_get_or_create,
    qualification_review,
    qualifications_review,
    quiz_questions,
    quiz_submit,
    screening_pass_mark,
)
from .studies import (
    character_progress_recount,
    character_progress_recount_later,
    gold_expectations_of,
    gold_expectations_record,
    item_gold_record,
    study_caps_set,
    study_change_record,
    study_create,
    study_created_record,
    study_open,
    study_set_status,
)

__all__ = [
    "BUNDLED_QUIZZES",
    "MAX_QUIZ_ATTEMPTS",
    "QUIZ_LENGTH",
    "AnnotationError",
    "QuizFileInvalid",
    "QuizLoadReport",
    "Submission",
    "account_ensure",
    "annotator_reinstate",
    "annotator_suspend",
    "assignment_check_active",
    "assignment_next",
    "assignment_skip",
    "character_progress_recount",
    "character_progress_recount_later",
    "characters_claim",
    "characters_with_quiz_ids",
    "consent_give",
    "export_job_killed",
    "export_job_request",
    "export_job_run",
    "export_jobs_tidy",
    "flag_resolve",
    "gold_expectations_of",
    "gold_expectations_record",
    "item_gold_record",
    "judgment_decide",
    "judgment_exclude",
    "judgment_submit",
    "lease_check",
    "leases_expire",
    "low_agreement_flags",
    "manifest_name",
    "membership_add",
    "membership_cap_set",
    "membership_remove",
    "memberships_add",
    "open_studies_refresh",
    "profile_get_or_create",
    "qualification_review",
    "qualifications_review",
    "quiz_file_read",
    "quiz_questions",
    "quiz_submit",
    "results_refresh",
    "screening_pass_mark",
    "screening_questions_load",
    "study_caps_set",
    "study_change_record",
    "study_create",
    "study_created_record",
    "study_open",
    "study_recompute",
    "study_results_refresh_request",
    "study_set_status",
    "worker_heartbeat_record",
]
