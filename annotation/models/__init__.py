"""Who rates what, and what it means. Builds on `dialogues`, never the reverse."""

from .audit import AuditAction, AuditEvent
from .common import localized, new_token
from .exports import ExportJob, ExportKind, ExportStatus
from .metrics import Dimension, Metric
from .operations import WorkerHeartbeat
from .people import (
    AnnotatorProfile,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    ScreeningQuestion,
)
from .results import StudyResults
from .studies import (
    CharacterProgress,
    GoldExpectation,
    Item,
    ItemAnswer,
    ItemExposure,
    ItemKind,
    PairingDesign,
    Study,
    StudyMembership,
    StudyStatus,
)
from .work import (
    COUNTED_JUDGMENT,
    COUNTED_JUDGMENT_SQL,
    AnswerExposure,
    Assignment,
    AssignmentState,
    FlagKind,
    GoldCheck,
    HumanGuess,
    Judgment,
    JudgmentDecision,
    Preference,
    QualityFlag,
    Rating,
    is_counted,
)

__all__ = [
    "COUNTED_JUDGMENT",
    "COUNTED_JUDGMENT_SQL",
    "AnnotatorProfile",
    "AnswerExposure",
    "Assignment",
    "AssignmentState",
    "AuditAction",
    "AuditEvent",
    "CharacterProgress",
    "Dimension",
    "ExportJob",
    "ExportKind",
    "ExportStatus",
    "FlagKind",
    "GoldCheck",
    "GoldExpectation",
    "HumanGuess",
    "Item",
    "ItemAnswer",
    "ItemExposure",
    "ItemKind",
    "Judgment",
    "JudgmentDecision",
    "Metric",
    "PairingDesign",
    "Preference",
    "ProfileStatus",
    "Qualification",
    "QualificationStatus",
    "QualityFlag",
    "Rating",
    "ScreeningQuestion",
    "Study",
    "StudyMembership",
    "StudyResults",
    "StudyStatus",
    "WorkerHeartbeat",
    "is_counted",
    "localized",
    "new_token",
]
