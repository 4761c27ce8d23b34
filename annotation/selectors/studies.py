"""A study's design and progress: how many annotators it needs, who is a member, coverage,
throughput and the staff's list of studies. Everything that spans a whole study is
aggregated in the database; Python only loops over characters, rounds, sources or hours."""

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import (
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, Least, TruncDay, TruncHour
from django.db.models.functions.datetime import TruncBase
from django.utils import timezone

from dialogues.character_names import character_shown_name
from dialogues.selectors import source_shown_name

from ..models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    Item,
    ItemAnswer,
    ItemKind,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
    StudyMembership,
)


@dataclass
class CharacterCapacity:
    character: object
    needed: int
    approved: int

    @property
    def short(self) -> int:
        return max(0, self.needed - self.approved)


def annotators_needed_by_character(study) -> dict[int, int]:
    """Per character id: the approved annotators the study's items need, diversity sets
    included (see `assignment.annotators_needed`)."""
    from ..pairing import annotators_needed

    # Per character: {scenario: [reference sets, compared sets] holding one of its answers}.
    by_scenario: dict[int, dict[int, list[int]]] = {}
    sets: dict[int, set] = {}
    for set_key, character_id, scenario_id, source_id in _diversity_set_answers(study):
        counts = by_scenario.setdefault(character_id, {}).setdefault(scenario_id, [0, 0])
        counts[0 if source_id == study.reference_source_id else 1] += 1
        sets.setdefault(character_id, set()).add(set_key)
    common = {
        "design": study.design,
        "n_compared": study.compared_sources.count(),
        "n_rounds": len(study.rounds),
        "overlap": study.overlap,
    }
    return {
        character_id: annotators_needed(
            **common,
            sets_by_scenario=by_scenario.get(character_id, {}).values(),
            n_sets=len(sets.get(character_id, ())),
        )
        for character_id in study.characters.values_list("pk", flat=True)
    }


def study_answers(study):
    """The answers a study's items may show: its characters, scenarios (none: all),
    reference and compared sources, both rounds."""
    from dialogues.models import Answer

    source_ids = [study.reference_source_id, *study.compared_sources.values_list("pk", flat=True)]
    answers = Answer.objects.filter(
        character__in=study.characters.all(), source_id__in=source_ids, round__in=[1, 2]
    )
    if study.scenarios.exists():
        answers = answers.filter(scenario__in=study.scenarios.all())
    return answers


def _diversity_set_answers(study) -> list[tuple]:
    """(set, character, scenario, source) of every answer in the study's diversity sets:
    those opening made, or before the study is opened, those it will make. A draft's
    figures must count them: the published study needs 63 annotators per character with
    its sets and 60 without."""
    from ..diversity import diversity_sets

    if not study.include_diversity:
        return []
    if Item.objects.filter(study=study).exists():
        return list(
            ItemAnswer.objects.filter(item__study=study, item__kind=ItemKind.DIVERSITY).values_list(
                "item_id", "item__character_id", "answer__scenario_id", "answer__source_id"
            )
        )
    answers = list(
        study_answers(study).values_list("character_id", "scenario_id", "round", "source_id", "pk")
    )
    scenario_of = {row[4]: row[1] for row in answers}
    return [
        ((character_id, source_id), character_id, scenario_of[answer_id], source_id)
        for character_id, source_id, chosen in diversity_sets(
            study.pk, answers, study.diversity_set_size
        )
        for answer_id in chosen
    ]


def study_capacity(study) -> list[CharacterCapacity]:
    """Per character: the approved annotators the design needs (never the same answer
    twice to one annotator) and how many the study can draw on. Simulated annotators
    are no real capacity; a members-only study counts its approved members alone."""
    needed = annotators_needed_by_character(study)
    approved = study_raters(study, study.characters.all()).filter(profile__simulated=False)
    counts = dict(approved.values_list("character_id").annotate(n=Count("pk")))
    return [
        CharacterCapacity(character=c, needed=needed[c.pk], approved=counts.get(c.pk, 0))
        for c in study.characters.order_by("pk")
    ]


def study_raters(study, characters):
    """The approved qualifications (annotator, character) of `characters` that may rate in
    the study: every approved annotator of a character, or once the study has members,
    the members assigned to all its characters or to that one."""
    from ..models import StudyMembership

    approved = Qualification.objects.filter(
        status=QualificationStatus.APPROVED,
        profile__status=ProfileStatus.APPROVED,
        character__in=characters,
    )
    if study.memberships.exists():
        # A member counts for a character if assigned to all of the study's characters
        # (none chosen) or to that one.
        assigned = StudyMembership.characters.through.objects.filter(
            studymembership__study=study,
            studymembership__annotator=OuterRef("profile__user"),
            character=OuterRef("character"),
        )
        unrestricted = StudyMembership.objects.filter(
            study=study, annotator=OuterRef("profile__user"), characters__isnull=True
        )
        approved = approved.filter(Exists(assigned) | Exists(unrestricted))
    else:
        # Annotators who rate only their own studies' items never rate a study open to all.
        approved = approved.filter(profile__members_only=False)
    return approved


def study_members(study: Study) -> list[dict]:
    members = list(
        StudyMembership.objects.filter(study=study).select_related("annotator").order_by("pk")
    )
    user_ids = [m.annotator_id for m in members]
    profiles = {p.user_id: p for p in AnnotatorProfile.objects.filter(user_id__in=user_ids)}
    # Both bases, named as on the annotator directory: what the results count (not
    # excluded, not gold) and everything the member handed in.
    given = Judgment.objects.filter(item__study=study, annotator_id__in=user_ids)
    done = dict(given.values_list("annotator_id").annotate(n=Count("pk")))
    counted = dict(given.counted().values_list("annotator_id").annotate(n=Count("pk")))
    characters = {}
    for user_id, name_zh, name_en in Qualification.objects.filter(
        profile__user_id__in=user_ids,
        status=QualificationStatus.APPROVED,
        character__in=study.characters.all(),
    ).values_list("profile__user_id", "character__name_zh", "character__name_en"):
        characters.setdefault(user_id, []).append(character_shown_name(name_zh, name_en))
    assigned = {}
    for membership_id, name_zh, name_en in StudyMembership.characters.through.objects.filter(
        studymembership__study=study
    ).values_list("studymembership_id", "character__name_zh", "character__name_en"):
        assigned.setdefault(membership_id, []).append(character_shown_name(name_zh, name_en))
    return [
        {
            "membership": m,
            "profile": profiles.get(m.annotator_id),
            "judgments": counted.get(m.annotator_id, 0),
            "judgments_all": done.get(m.annotator_id, 0),
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
        _row(
            character_shown_name(row["character__name_zh"], row["character__name_en"]), row, overlap
        )
        for row in items.values("character_id", "character__name_zh", "character__name_en")
        .annotate(**_progress_figures(overlap))
        .order_by("character_id")
    ]
    by_round = [
        _row(str(row["round"]) if row["kind"] == ItemKind.PAIR else "diversity", row, overlap)
        for row in items.values("kind", "round")
        .annotate(**_progress_figures(overlap))
        .order_by("kind", "round")
    ]
    # A pair counts for the source of each of its answers; a diversity set once, for the
    # source it names (one row per set: its first slot).
    slots = ItemAnswer.objects.filter(item__study=study, item__is_gold=False).filter(
        Q(item__kind=ItemKind.PAIR) | Q(slot=0)
    )
    by_source = [
        _row(source_shown_name(row["source_name"]), row, overlap)
        for row in slots.values(
            source=Coalesce("item__diversity_source_id", "answer__source_id"),
            source_name=Coalesce(
                "item__diversity_source__display_name", "answer__source__display_name"
            ),
        )
        .annotate(**_progress_figures(overlap, prefix="item__"))
        .order_by("source_name")
    ]
    return {
        "total": total,
        "by_character": by_character,
        "by_round": by_round,
        "by_source": by_source,
    }


HOURLY_SPAN = timedelta(hours=72)
MAX_DAYS = 90


class _TruncOnSqliteInSql(TruncBase):
    """TruncHour / TruncDay that SQLite computes itself. Django's SQLite backend truncates
    through a Python function called once per row (it may have to change time zones):
    0.5 s of a full study's dashboard went on the 72,000 calls. Where no time zone changes
    (the stored times are already in the zone asked for, UTC by default), SQLite's own
    `strftime` writes the very same text; otherwise Django's function still does it."""

    sqlite_format = ""

    def as_sqlite(self, compiler, connection, **extra_context):
        tzname = self.get_tzname()
        if tzname is not None and tzname != connection.timezone_name:
            return self.as_sql(compiler, connection, **extra_context)
        sql, params = compiler.compile(self.lhs)
        return f"strftime(%s, {sql})", (self.sqlite_format, *params)


class _HourOf(_TruncOnSqliteInSql, TruncHour):
    sqlite_format = "%Y-%m-%d %H:00:00"


class _DayOf(_TruncOnSqliteInSql, TruncDay):
    sqlite_format = "%Y-%m-%d 00:00:00"


def study_throughput(study: Study, now=None) -> dict:
    """Judgments submitted per hour (a study younger than three days) or per day, with
    empty buckets filled in so the chart's time axis is even."""
    now = now or timezone.now()
    # The judgment's own study (an item's never changes): no join with the items.
    judgments = Judgment.objects.filter(study=study)
    first = judgments.order_by("submitted_at").values_list("submitted_at", flat=True).first()
    if first is None:
        return {"unit": "hour", "labels": [], "counts": []}
    hourly = now - first <= HOURLY_SPAN
    unit, step = ("hour", timedelta(hours=1)) if hourly else ("day", timedelta(days=1))
    trunc = _HourOf if hourly else _DayOf
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
