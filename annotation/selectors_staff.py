"""Reads behind the staff pages: the screening queue, the annotator directory, coverage,
study progress and the audit trail. Everything that spans a whole study is aggregated in
the database; Python only ever loops over characters, rounds, sources or time buckets."""

import statistics
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import (
    CharField,
    Count,
    F,
    Min,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Cast, Coalesce, Least, TruncDay, TruncHour
from django.utils import timezone

from .models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    AuditEvent,
    Item,
    ItemAnswer,
    ItemKind,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    QualityFlag,
    Rating,
    Study,
    StudyMembership,
    StudyResults,
)

# Screening ---------------------------------------------------------------------------


def screening_queue(*, status: str = QualificationStatus.PASSED, character_id=None):
    """Applications in one state (by default: quiz passed, awaiting review), oldest first."""
    queue = Qualification.objects.filter(status=status).select_related(
        "profile__user", "character", "reviewed_by"
    )
    if character_id:
        queue = queue.filter(character_id=character_id)
    return queue.order_by("profile__created_at", "pk")


def queue_counts() -> dict[str, int]:
    return dict(
        Qualification.objects.values_list("status").annotate(n=Count("pk")).order_by("status")
    )


# Annotators --------------------------------------------------------------------------


@dataclass
class AnnotatorRow:
    profile: AnnotatorProfile
    approved_characters: list = field(default_factory=list)
    studies: list = field(default_factory=list)
    # Counted as the results count them (`Judgment.objects.counted()`: neither gold nor
    # excluded), so that staff and researchers quote the same figure; `judgments_all` is
    # every submission, the work the annotator did.
    judgments: int = 0
    judgments_all: int = 0
    median_seconds: float | None = None  # of counted judgments, as on the results page
    open_flags: int = 0
    mean_distance: float | None = None


def annotator_profiles(*, status: str = "", search: str = ""):
    profiles = AnnotatorProfile.objects.select_related("user").filter(simulated=False)
    if status:
        profiles = profiles.filter(status=status)
    if search:
        profiles = profiles.filter(
            Q(user__email__icontains=search) | Q(pseudonym__icontains=search)
        )
    return profiles.order_by("user__email")


def annotator_rows(profiles) -> list[AnnotatorRow]:
    """Directory rows for one page of profiles: a fixed number of queries, whatever the
    page size."""
    profiles = list(profiles)
    user_ids = [p.user_id for p in profiles]
    rows = {p.user_id: AnnotatorRow(profile=p) for p in profiles}
    for q in (
        Qualification.objects.filter(
            profile__user_id__in=user_ids, status=QualificationStatus.APPROVED
        )
        .select_related("character")
        .order_by("character_id")
    ):
        rows[q.profile.user_id].approved_characters.append(q.character)
    judged = Judgment.objects.filter(annotator_id__in=user_ids)
    studies = {s.pk: s for s in Study.objects.all()}
    seen_studies = {user_id: set() for user_id in user_ids}
    for user_id, study_id, n in judged.values_list("annotator_id", "item__study_id").annotate(
        n=Count("pk")
    ):
        rows[user_id].judgments_all += n
        seen_studies[user_id].add(study_id)
    for user_id, n in judged.counted().values_list("annotator_id").annotate(n=Count("pk")):
        rows[user_id].judgments = n
    for user_id, study_id in StudyMembership.objects.filter(annotator_id__in=user_ids).values_list(
        "annotator_id", "study_id"
    ):
        seen_studies[user_id].add(study_id)
    seconds = {user_id: [] for user_id in user_ids}
    for user_id, taken in judged.counted().values_list("annotator_id", "seconds_on_task"):
        seconds[user_id].append(taken)
    for user_id, n in (
        QualityFlag.objects.filter(annotator_id__in=user_ids, resolved_at__isnull=True)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
    ):
        rows[user_id].open_flags = n
    distances = _distances_by_pseudonym({p.pseudonym for p in profiles})
    for user_id, row in rows.items():
        row.studies = sorted(
            (studies[pk] for pk in seen_studies[user_id] if pk in studies), key=lambda s: s.name
        )
        if seconds[user_id]:
            row.median_seconds = statistics.median(seconds[user_id])
        row.mean_distance = distances.get(row.profile.pseudonym)
    return [rows[p.user_id] for p in profiles]


def _distances_by_pseudonym(pseudonyms: set[str]) -> dict[str, float]:
    """Each annotator's mean distance from the other annotators, over every study's
    latest results, weighted by the ratings compared (what the workers computed)."""
    totals: dict[str, list[float]] = {}
    # Only the annotators' part of each results document, not the leaderboards.
    for annotators in StudyResults.objects.values_list("payload__annotators", flat=True):
        for pseudonym, figures in (annotators or {}).items():
            distance, units = figures.get("mean_distance"), figures.get("units_compared") or 0
            if pseudonym in pseudonyms and distance is not None and units:
                total = totals.setdefault(pseudonym, [0.0, 0])
                total[0] += distance * units
                total[1] += units
    return {p: total / units for p, (total, units) in totals.items() if units}


def annotator_detail(profile: AnnotatorProfile) -> dict:
    user = profile.user
    return {
        "row": annotator_rows([profile])[0],
        "qualifications": list(
            profile.qualifications.select_related("character", "reviewed_by").order_by(
                "character_id"
            )
        ),
        "memberships": list(
            StudyMembership.objects.filter(annotator=user).select_related("study").order_by("pk")
        ),
        "flags": list(
            QualityFlag.objects.filter(annotator=user, resolved_at__isnull=True)
            .select_related("study")
            .order_by("-created_at")[:50]
        ),
        "events": list(
            AuditEvent.objects.filter(
                Q(target_type="annotatorprofile", target_id=str(profile.pk))
                | Q(target_type="qualification", target_id__in=_ids(profile.qualifications))
                | Q(target_type="studymembership", target_label__startswith=profile.pseudonym)
            ).select_related("actor")[:50]
        ),
        "open_leases": Assignment.objects.filter(
            annotator=user, state=AssignmentState.ACTIVE, expires_at__gt=timezone.now()
        ).count(),
    }


def _ids(queryset) -> list[str]:
    return [str(pk) for pk in queryset.values_list("pk", flat=True)]


# Assignment and coverage -------------------------------------------------------------


def study_members(study: Study) -> list[dict]:
    members = list(
        StudyMembership.objects.filter(study=study).select_related("annotator").order_by("pk")
    )
    user_ids = [m.annotator_id for m in members]
    profiles = {p.user_id: p for p in AnnotatorProfile.objects.filter(user_id__in=user_ids)}
    done = dict(
        Judgment.objects.filter(item__study=study, annotator_id__in=user_ids)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
    )
    characters = {}
    for user_id, name in Qualification.objects.filter(
        profile__user_id__in=user_ids,
        status=QualificationStatus.APPROVED,
        character__in=study.characters.all(),
    ).values_list("profile__user_id", "character__name_zh"):
        characters.setdefault(user_id, []).append(name)
    assigned = {}
    for membership_id, name in StudyMembership.characters.through.objects.filter(
        studymembership__study=study
    ).values_list("studymembership_id", "character__name_zh"):
        assigned.setdefault(membership_id, []).append(name)
    return [
        {
            "membership": m,
            "profile": profiles.get(m.annotator_id),
            "judgments": done.get(m.annotator_id, 0),
            "characters": characters.get(m.annotator_id, []),
            "assigned_characters": assigned.get(m.pk, []),
        }
        for m in members
    ]


def assignable_annotators(study: Study):
    """Approved annotators for at least one of the study's characters, not yet members."""
    return (
        AnnotatorProfile.objects.filter(
            status=ProfileStatus.APPROVED,
            simulated=False,
            qualifications__status=QualificationStatus.APPROVED,
            qualifications__character__in=study.characters.all(),
        )
        .exclude(user__in=study.memberships.values("annotator_id"))
        .select_related("user")
        .distinct()
        .order_by("user__email")
    )


# Study dashboard ---------------------------------------------------------------------


@dataclass
class ProgressRow:
    label: str
    items: int
    complete: int
    in_progress: int
    judgments: int  # counted up to the overlap per item
    needed: int

    @property
    def not_started(self) -> int:
        return self.items - self.complete - self.in_progress

    @property
    def percent(self) -> int:
        return round(100 * self.judgments / self.needed) if self.needed else 100


def _progress_figures(overlap: int, prefix: str = ""):
    count = f"{prefix}judgment_count"
    return {
        "items": Count("pk"),
        "complete": Count("pk", filter=Q(**{f"{count}__gte": overlap})),
        "in_progress": Count("pk", filter=Q(**{f"{count}__gt": 0, f"{count}__lt": overlap})),
        "judgments": Sum(Least(F(count), Value(overlap))),
    }


def _row(label, figures, overlap) -> ProgressRow:
    return ProgressRow(
        label=label,
        items=figures["items"],
        complete=figures["complete"],
        in_progress=figures["in_progress"],
        judgments=figures["judgments"] or 0,
        needed=figures["items"] * overlap,
    )


def study_progress(study: Study) -> dict:
    """Progress of the study's regular (non-gold) items: overall, per character, per
    round and per source, each from one aggregate query."""
    overlap = study.overlap
    items = Item.objects.filter(study=study, is_gold=False)
    total = _row("", items.aggregate(**_progress_figures(overlap)), overlap)
    by_character = [
        _row(f"{row['character__name_zh']}", row, overlap)
        for row in items.values("character_id", "character__name_zh")
        .annotate(**_progress_figures(overlap))
        .order_by("character_id")
    ]
    by_round = [
        _row(str(row["round"]) if row["kind"] == ItemKind.PAIR else "diversity", row, overlap)
        for row in items.values("kind", "round")
        .annotate(**_progress_figures(overlap))
        .order_by("kind", "round")
    ]
    slots = ItemAnswer.objects.filter(item__study=study, item__is_gold=False)
    by_source = [
        _row(row["answer__source__display_name"], row, overlap)
        for row in slots.values("answer__source_id", "answer__source__display_name")
        .annotate(
            items=Count("item_id", distinct=True),
            complete=Count("item_id", distinct=True, filter=Q(item__judgment_count__gte=overlap)),
            in_progress=Count(
                "item_id",
                distinct=True,
                filter=Q(item__judgment_count__gt=0, item__judgment_count__lt=overlap),
            ),
            # A diversity set holds several answers of one source: count its judgments once.
            judgments=Sum(
                Least(F("item__judgment_count"), Value(overlap)),
                filter=Q(item__kind=ItemKind.PAIR) | Q(slot=0),
            ),
        )
        .order_by("answer__source__display_name")
    ]
    return {
        "total": total,
        "by_character": by_character,
        "by_round": by_round,
        "by_source": by_source,
    }


HOURLY_SPAN = timedelta(hours=72)
MAX_DAYS = 90


def study_throughput(study: Study, now=None) -> dict:
    """Judgments submitted per hour (a study younger than three days) or per day, with
    empty buckets filled in so the chart's time axis is even."""
    now = now or timezone.now()
    judgments = Judgment.objects.filter(item__study=study)
    first = judgments.order_by("submitted_at").values_list("submitted_at", flat=True).first()
    if first is None:
        return {"unit": "hour", "labels": [], "counts": []}
    hourly = now - first <= HOURLY_SPAN
    unit, step = ("hour", timedelta(hours=1)) if hourly else ("day", timedelta(days=1))
    trunc = TruncHour if hourly else TruncDay
    start = max(first, now - step * (72 if hourly else MAX_DAYS))
    counts = {
        bucket: n
        for bucket, n in judgments.filter(submitted_at__gte=_floor(start, unit))
        .annotate(bucket=trunc("submitted_at"))
        .values_list("bucket")
        .annotate(n=Count("pk"))
        .order_by("bucket")
    }
    labels, values = [], []
    bucket = _floor(start, unit)
    while bucket <= now:
        labels.append(bucket.strftime("%m-%d %H:00" if hourly else "%Y-%m-%d"))
        values.append(counts.get(bucket, 0))
        bucket += step
    return {"unit": unit, "labels": labels, "counts": values}


def _floor(moment, unit):
    moment = moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if unit == "day" else moment


RATE_WINDOW = timedelta(hours=24)


def study_eta(study: Study, remaining: int, now=None) -> dict:
    """When the study would be complete at the rate of the last 24 hours."""
    now = now or timezone.now()
    recent = Judgment.objects.filter(
        item__study=study, item__is_gold=False, submitted_at__gte=now - RATE_WINDOW
    ).count()
    per_hour = recent / (RATE_WINDOW.total_seconds() / 3600)
    if remaining <= 0:
        return {"per_hour": per_hour, "hours": 0, "at": now}
    if not recent:
        return {"per_hour": 0, "hours": None, "at": None}
    hours = remaining / per_hour
    return {"per_hour": per_hour, "hours": hours, "at": now + timedelta(hours=hours)}


def open_leases(study: Study) -> int:
    return Assignment.objects.filter(
        item__study=study, state=AssignmentState.ACTIVE, expires_at__gt=timezone.now()
    ).count()


def flagged_judgments(study: Study, limit: int = 50) -> list[dict]:
    """Judgments with open flags, to be kept or excluded; the longest waiting first."""
    open_flags = QualityFlag.objects.filter(
        study=study, resolved_at__isnull=True, judgment__isnull=False
    )
    judgment_ids = list(
        open_flags.values("judgment_id")
        .annotate(first=Min("created_at"))
        .order_by("first", "judgment_id")
        .values_list("judgment_id", flat=True)[:limit]
    )
    judgments = Judgment.objects.select_related("item__character").in_bulk(judgment_ids)
    names = dict(
        AnnotatorProfile.objects.filter(
            user_id__in={j.annotator_id for j in judgments.values()}
        ).values_list("user_id", "pseudonym")
    )
    flags: dict[int, list] = {}
    for flag in open_flags.filter(judgment_id__in=judgment_ids).order_by("created_at", "pk"):
        flags.setdefault(flag.judgment_id, []).append(flag)
    # The ratings as given, per answer in metric order, so that a manager sees what was
    # flagged (straight lines, wild values) before deciding.
    ratings: dict[int, dict] = {}
    for judgment_id, answer_id, value in (
        Rating.objects.filter(judgment_id__in=judgment_ids)
        .order_by("judgment_id", "answer_id", "metric__position")
        .values_list("judgment_id", "answer_id", "value")
    ):
        ratings.setdefault(judgment_id, {}).setdefault(answer_id, []).append(value)
    return [
        {
            "judgment": judgments[pk],
            "flags": flags.get(pk, []),
            "pseudonym": names.get(judgments[pk].annotator_id, ""),
            "ratings": [" ".join(map(str, values)) for values in ratings.get(pk, {}).values()],
        }
        for pk in judgment_ids
    ]


def flagged_annotators(study: Study) -> list[dict]:
    """Open flags on annotators' work as a whole (low agreement), with their profiles."""
    flags = list(
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True, judgment__isnull=True)
        .select_related("annotator")
        .order_by("created_at")
    )
    profiles = AnnotatorProfile.objects.in_bulk(
        [f.annotator_id for f in flags], field_name="user_id"
    )
    return [{"flag": f, "profile": profiles.get(f.annotator_id)} for f in flags]


def flagged_count(study: Study) -> int:
    return (
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True, judgment__isnull=False)
        .values("judgment_id")
        .distinct()
        .count()
    )


def _count_of(queryset):
    """A correlated COUNT subquery: no join fan-out between items and members."""
    return Coalesce(
        Subquery(queryset.values("study").annotate(n=Count("pk")).values("n")[:1]), Value(0)
    )


def staff_studies():
    return Study.objects.annotate(
        item_count=_count_of(Item.objects.filter(study=OuterRef("pk"), is_gold=False)),
        member_count=_count_of(StudyMembership.objects.filter(study=OuterRef("pk"))),
    ).order_by("-created_at")


# Audit trail -------------------------------------------------------------------------


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


def user_by_email(email: str):
    return get_user_model().objects.filter(email__iexact=email.strip()).first()
