"""The Django admin of annotation, one module per group of models. Importing the package
registers them all (Django's autodiscovery imports `annotation.admin`)."""

from .annotators import AnnotatorProfileAdmin, QualificationAdmin, QualificationInline
from .judgments import AssignmentAdmin, JudgmentAdmin, QualityFlagAdmin
from .quiz_bank import CHOICE_SLOTS, ScreeningQuestionAdmin, ScreeningQuestionForm
from .studies import ItemAdmin, MetricAdmin, StudyAdmin, StudyMembershipAdmin
from .trail import AuditEventAdmin

__all__ = [
    "CHOICE_SLOTS",
    "AnnotatorProfileAdmin",
    "AssignmentAdmin",
    "AuditEventAdmin",
    "ItemAdmin",
    "JudgmentAdmin",
    "MetricAdmin",
    "QualificationAdmin",
    "QualificationInline",
    "QualityFlagAdmin",
    "ScreeningQuestionAdmin",
    "ScreeningQuestionForm",
    "StudyAdmin",
    "StudyMembershipAdmin",
]
