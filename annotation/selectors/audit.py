"""The audit trail, as the staff page and the snapshot export list it."""

from django.db.models import (
    CharField,
    Q,
)
from django.db.models.functions import Cast

from ..models import (
    AnnotatorProfile,
    AuditEvent,
    Judgment,
    Qualification,
    Study,
    StudyMembership,
)


def audit_events(*, action: str = "", study_id=None, actor: str = ""):
    events = AuditEvent.objects.select_related("actor", "study")
    if action:
        events = events.filter(action=action)
    if study_id:
        events = events.filter(study_id=study_id)
    if actor:
        events = events.filter(actor_label__icontains=actor)
    return events


AUDIT_COLUMNS = [
    "at",
    "actor",
    "action",
    "target_type",
    "target_id",
    "target",
    "before",
    "after",
    "note",
]


def audit_events_for_study(study: Study) -> list[dict]:
    """The study's audit trail, oldest first, as plain rows for the export snapshot:
    who (the staff account, or empty for the platform itself), when, what, on what,
    before and after. Annotators appear by pseudonym only."""
    return [
        {
            "at": event.at.isoformat(),
            "actor": event.actor_label,
            "action": event.action,
            "target_type": event.target_type,
            "target_id": event.target_id,
            "target": event.target_label,
            "before": event.before,
            "after": event.after,
            "note": event.note,
        }
        for event in _study_events(study).order_by("at", "pk")
    ]


def _study_events(study: Study):
    """Events of the study itself, and the screening and suspension decisions about the
    people who could work on it (they carry no study of their own)."""
    as_text = {"text": Cast("pk", CharField())}
    qualifications = (
        Qualification.objects.filter(character__in=study.characters.all())
        .annotate(**as_text)
        .values("text")
    )
    workers = Judgment.objects.filter(item__study=study).values("annotator_id")
    members = StudyMembership.objects.filter(study=study).values("annotator_id")
    profiles = (
        AnnotatorProfile.objects.filter(Q(user__in=workers) | Q(user__in=members))
        .annotate(**as_text)
        .values("text")
    )
    return AuditEvent.objects.filter(
        Q(study=study)
        | Q(study__isnull=True, target_type="qualification", target_id__in=qualifications)
        | Q(study__isnull=True, target_type="annotatorprofile", target_id__in=profiles)
    )
