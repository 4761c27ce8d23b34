"""The audit trail, as the staff page and the snapshot export list it."""

from django.db.models import (
    CharField,
    Q,
)
from django.db.models.functions import Cast
from django.utils.translation import gettext

from dialogues.character_names import character_shown_name
from dialogues.models import Character, Source
from dialogues.selectors import source_shown_name

from ..models import (
    AnnotatorProfile,
    AuditAction,
    AuditEvent,
    Judgment,
    PairingDesign,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
    StudyMembership,
    StudyStatus,
)
from ..models.audit import OLDER_NAMED


def audit_events(*, action: str = "", study_id=None, actor: str = ""):
    """The trail, newest first. An action finds the rows shown by its name: a pause
    recorded before pauses had an action of their own is found as a pause, and not as a
    status change (`OLDER_NAMED`)."""
    events = AuditEvent.objects.select_related("actor", "study")
    if action:
        events = events.filter(_shown_as(action))
    if study_id:
        events = events.filter(study_id=study_id)
    if actor:
        events = events.filter(actor_label__icontains=actor)
    return events


def _older(action: str) -> Q:
    recorded, side, status = OLDER_NAMED[action]
    return Q(action=recorded, **{f"{side}__status": status})


def _shown_as(action: str) -> Q:
    """The rows whose `AuditEvent.action_name` is this action's name."""
    if action in OLDER_NAMED:
        return Q(action=action) | _older(action)
    named_otherwise = [
        _older(named) for named, (recorded, *_) in OLDER_NAMED.items() if recorded == action
    ]
    if not named_otherwise:
        return Q(action=action)
    # Excluded by key, not by a negated JSON lookup: on a row whose side has no status
    # that would be NULL, and the row would be lost.
    others = AuditEvent.objects.filter(Q(*named_otherwise, _connector=Q.OR)).values("pk")
    return Q(action=action) & ~Q(pk__in=others)


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


# An event records what changed as the database holds it (ids, codes): the page shows
# sources and characters by name and states by their label in the page's language.
SOURCE_FIELDS = {"reference_source", "compared_sources"}
CHARACTER_FIELDS = {"characters"}
STATE_FIELDS = {"status", "profile_status", "design"}
STATES = (StudyStatus, PairingDesign, ProfileStatus, QualificationStatus)


def audit_changes_shown(events) -> None:
    """Give each event `before_shown` and `after_shown`: its (field, value as shown)
    pairs, with the names of the sources and characters the page's events name, read in
    one query each."""
    source_ids, character_ids = set(), set()
    for event in events:
        for change in (event.before, event.after):
            for key, value in (change or {}).items():
                ids = value if isinstance(value, list) else [value]
                if key in SOURCE_FIELDS:
                    source_ids.update(i for i in ids if isinstance(i, int))
                elif key in CHARACTER_FIELDS and isinstance(value, list):
                    character_ids.update(i for i in ids if isinstance(i, int))
    names = {
        "source": {
            pk: source_shown_name(name)
            for pk, name in Source.objects.filter(pk__in=source_ids).values_list(
                "pk", "display_name"
            )
        },
        "character": {
            pk: character_shown_name(name_zh, name_en)
            for pk, name_zh, name_en in Character.objects.filter(pk__in=character_ids).values_list(
                "pk", "name_zh", "name_en"
            )
        },
    }
    states = {value: str(label) for choices in STATES for value, label in choices.choices}
    for event in events:
        event.before_shown = _shown(event.before, names, states, event.action)
        event.after_shown = _shown(event.after, names, states, event.action)


# A membership with no characters chosen rates every character the annotator is approved
# for (`StudyMembership.characters`): its empty list is not "none".
MEMBERSHIP_ACTIONS = (AuditAction.MEMBERSHIP_ADD, AuditAction.MEMBERSHIP_REMOVE)


def _shown(change, names, states, action="") -> list[tuple[str, object]]:
    shown = []
    for key, value in (change or {}).items():
        if key == "characters" and value == [] and action in MEMBERSHIP_ACTIONS:
            shown.append((key, gettext("all approved")))
        else:
            shown.append((key, _value_shown(key, value, names, states)))
    return shown


def _value_shown(key, value, names, states):
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    # Ids are named: a source by its id or a list of them, characters by a list of them
    # (a number alone under "characters" is a count, as collection runs recorded before).
    kind = ""
    if key in SOURCE_FIELDS and isinstance(value, int | list):
        kind = "source"
    elif key in CHARACTER_FIELDS and isinstance(value, list):
        kind = "character"
    if kind:
        ids = value if isinstance(value, list) else [value]
        # An id no longer in the database (a deleted source) is shown as it was recorded.
        return ", ".join(str(names[kind].get(i, i)) for i in ids)
    if key in STATE_FIELDS and isinstance(value, str):
        return states.get(value, value)
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)  # rounds 1, 2 rather than [1, 2]
    return value
