"""Reads of the annotation domain, one module per concept. Selectors only read: they
never import services, views or tasks.

- `annotating`: the rating page (metrics, the item as shown, the lease at work)
- `progress`: the rating page's progress line and when a break is due
- `screening`: the annotator's way to rating and the staff's screening queue
- `studies`: a study's design, members, coverage and progress
- `results`: the results page and export jobs
- `annotators`: the staff's annotator directory
- `quality`: flags waiting for a decision
- `audit`: the audit trail
"""

from .annotating import (
    ItemBlock,
    ShownAnswer,
    ShownItem,
    form_fields_of,
    item_block,
    item_blocks_load,
    item_shown,
    last_worker_heartbeat,
    lease_at_work,
    metrics_cache_clear,
    metrics_for,
    own_lease,
    shown_item,
)
from .annotators import (
    AnnotatorRow,
    annotator_detail,
    annotator_profiles,
    annotator_rows,
    user_by_email,
)
from .audit import AUDIT_COLUMNS, audit_changes_shown, audit_events, audit_events_for_study
from .progress import Progress, is_break_due, progress_of
from .quality import flagged_annotators, flagged_count, flagged_judgments, flagged_kinds
from .results import Cell, ResultsView, export_jobs_of, results_view, studies_with_results
from .screening import (
    Step,
    annotator_step,
    pending_quizzes,
    qualifications_of,
    queue_counts,
    screening_queue,
)
from .studies import (
    CharacterCapacity,
    ProgressRow,
    annotators_needed_by_character,
    assignable_annotators,
    open_leases,
    staff_studies,
    study_answers,
    study_capacity,
    study_eta,
    study_members,
    study_progress,
    study_raters,
    study_throughput,
)

__all__ = [
    "AUDIT_COLUMNS",
    "AnnotatorRow",
    "Cell",
    "CharacterCapacity",
    "ItemBlock",
    "Progress",
    "ProgressRow",
    "ResultsView",
    "ShownAnswer",
    "ShownItem",
    "Step",
    "annotator_detail",
    "annotator_profiles",
    "annotator_rows",
    "annotator_step",
    "annotators_needed_by_character",
    "assignable_annotators",
    "audit_changes_shown",
    "audit_events",
    "audit_events_for_study",
    "export_jobs_of",
    "flagged_annotators",
    "flagged_count",
    "flagged_judgments",
    "flagged_kinds",
    "form_fields_of",
    "is_break_due",
    "item_block",
    "item_blocks_load",
    "item_shown",
    "last_worker_heartbeat",
    "lease_at_work",
    "metrics_cache_clear",
    "metrics_for",
    "open_leases",
    "own_lease",
    "pending_quizzes",
    "progress_of",
    "qualifications_of",
    "queue_counts",
    "results_view",
    "screening_queue",
    "shown_item",
    "staff_studies",
    "studies_with_results",
    "study_answers",
    "study_capacity",
    "study_eta",
    "study_members",
    "study_progress",
    "study_raters",
    "study_throughput",
    "user_by_email",
]
