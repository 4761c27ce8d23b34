"""The staff's annotator directory and one annotator's record."""

import logging
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import (
    Count,
    Q,
)
from django.utils import timezone

from ..models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    AuditEvent,
    Judgment,
    Qualification,
    QualificationStatus,
    QualityFlag,
    Study,
    StudyMembership,
    StudyResults,
)
from ..results.annotators import annotator_work
from ..results.schema import ResultsSchemaError, read_annotators

logger = logging.getLogger(__name__)


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

    @property
    def approved_names(self) -> list[str]:
        return [c.shown_name for c in self.approved_characters]


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
    by_profile = {p.pk: rows[p.user_id] for p in profiles}
    for q in (
        Qualification.objects.filter(profile_id__in=by_profile, status=QualificationStatus.APPROVED)
        .select_related("character")
        .order_by("character_id")
    ):
        by_profile[q.profile_id].approved_characters.append(q.character)
    judged = Judgment.objects.filter(annotator_id__in=user_ids)
    studies = {s.pk: s for s in Study.objects.all()}
    seen_studies = {user_id: set() for user_id in user_ids}
    for user_id, study_id, n in judged.values_list("annotator_id", "item__study_id").annotate(
        n=Count("pk")
    ):
        rows[user_id].judgments_all += n
        seen_studies[user_id].add(study_id)
    for user_id, study_id in StudyMembership.objects.filter(annotator_id__in=user_ids).values_list(
        "annotator_id", "study_id"
    ):
        seen_studies[user_id].add(study_id)
    # The same figures, from the same function, as the results' per-annotator part.
    work = annotator_work(
        judged, QualityFlag.objects.filter(annotator_id__in=user_ids, resolved_at__isnull=True)
    )
    for user_id, figures in work.items():
        rows[user_id].judgments = figures.judgments
        rows[user_id].median_seconds = figures.median_seconds
        rows[user_id].open_flags = figures.open_flags
    distances = _distances_by_pseudonym({p.pseudonym for p in profiles})
    for user_id, row in rows.items():
        row.studies = sorted(
            (studies[pk] for pk in seen_studies[user_id] if pk in studies), key=lambda s: s.name
        )
        row.mean_distance = distances.get(row.profile.pseudonym)
    return [rows[p.user_id] for p in profiles]


def _distances_by_pseudonym(pseudonyms: set[str]) -> dict[str, float]:
    """Each annotator's mean distance from the other annotators, over every study's
    latest results, weighted by the ratings compared (what the workers computed)."""
    totals: dict[str, list[float]] = {}
    # Only the annotators' part of each results document, not the leaderboards.
    parts = StudyResults.objects.values_list(
        "study_id", "payload__schema_version", "payload__annotators"
    )
    for study_id, version, part in parts:
        try:
            annotators = read_annotators(version, part)
        except ResultsSchemaError:
            logger.warning("results of study %s cannot be read", study_id, exc_info=True)
            continue
        for pseudonym, figures in annotators.items():
            distance, units = figures.get("mean_distance"), figures.get("units_compared") or 0
            if pseudonym in pseudonyms and distance is not None and units:
                total = totals.setdefault(pseudonym, [0.0, 0])
                total[0] += distance * units
                total[1] += units
    return {p: total / units for p, (total, units) in totals.items() if units}


def _ids(queryset) -> list[str]:
    return [str(pk) for pk in queryset.values_list("pk", flat=True)]


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


def user_by_email(email: str):
    return get_user_model().objects.filter(email__iexact=email.strip()).first()
