"""Non-trivial reads of the annotation domain."""

import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from dialogues.models import Answer

from .assignment import POSITIONS
from .models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    ExportJob,
    ItemKind,
    Judgment,
    Metric,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    StudyStatus,
    WorkerHeartbeat,
)

logger = logging.getLogger(__name__)


# Metric definitions are read on every rating request and change only when staff edit a
# label, so each process keeps them for a minute instead of asking the database each time.
METRICS_CACHE_SECONDS = 60
_metrics_cache: dict[bool, tuple[float, list[Metric]]] = {}


def metrics_for(*, diversity: bool) -> list[Metric]:
    """The metrics of a pair item (diversity=False) or a diversity set, in display order."""
    cached = _metrics_cache.get(diversity)
    if cached is not None and time.monotonic() - cached[0] < METRICS_CACHE_SECONDS:
        return cached[1]
    metrics = list(Metric.objects.filter(for_diversity=diversity).order_by("position"))
    _metrics_cache[diversity] = (time.monotonic(), metrics)
    return metrics


def metrics_cache_clear(**_signal_arguments) -> None:
    """Forget this process's cached metric definitions and item blocks."""
    _metrics_cache.clear()
    _item_blocks.clear()


# An item's answers, as every lease, rating page and submission of it needs them. An item's
# slots and exposures never change once the study is open; an answer's text changes only
# when a corrected file is imported, which shows here within a minute.
ITEM_BLOCK_SECONDS = 60
ITEM_BLOCKS_KEPT = 4000
_item_blocks: dict[int, tuple[float, "ItemBlock"]] = {}


@dataclass(frozen=True)
class ItemBlock:
    slots: dict[int, Answer]  # slot -> the answer rated in it
    exposed_answer_ids: list[int]  # everything the item shows, round-1 context included
    context: dict[int, Answer]  # source id -> its round-1 answer (round-2 pairs only)


def item_block(item) -> ItemBlock:
    cached = _item_blocks.get(item.pk)
    if cached is not None and time.monotonic() - cached[0] < ITEM_BLOCK_SECONDS:
        return cached[1]
    from .models import ItemAnswer, ItemExposure

    slot_of = dict(ItemAnswer.objects.filter(item_id=item.pk).values_list("answer_id", "slot"))
    # The exposures are the rated answers plus, in round 2, each one's round-1 answer.
    exposed = [
        exposure.answer
        for exposure in ItemExposure.objects.filter(item_id=item.pk).select_related("answer")
    ]
    block = ItemBlock(
        slots={slot_of[a.pk]: a for a in exposed if a.pk in slot_of},
        exposed_answer_ids=[a.pk for a in exposed],
        context={
            a.source_id: a
            for a in exposed
            if item.kind == ItemKind.PAIR
            and item.round == 2
            and a.pk not in slot_of
            and a.round == 1
        },
    )
    if len(_item_blocks) >= ITEM_BLOCKS_KEPT:
        _item_blocks.clear()
    _item_blocks[item.pk] = (time.monotonic(), block)
    return block


def form_fields_of(assignment: Assignment) -> tuple[list[str], list[Metric]]:
    """The positions and metrics of the rating form for this lease, without its texts."""
    if assignment.item.kind == ItemKind.PAIR:
        return list(POSITIONS[: len(assignment.display_order)]), metrics_for(diversity=False)
    return ["set"], metrics_for(diversity=True)


def last_worker_heartbeat() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.order_by("-seen_at").first()


# Where an annotator stands ---------------------------------------------------------------


class Step:
    CONSENT = "consent"
    CHARACTERS = "characters"
    QUIZ = "quiz"
    WAITING = "waiting"
    READY = "ready"
    REJECTED = "rejected"
    SUSPENDED = "suspended"


def annotator_step(user) -> str:
    """The next thing this person has to do before (or instead of) rating."""
    # Asked on every annotator request: the profile and its qualifications' statuses in
    # one query (one row per qualification, or one row with None without any).
    rows = list(
        AnnotatorProfile.objects.filter(user=user).values_list(
            "consented_at", "status", "qualifications__status"
        )
    )
    if not rows or rows[0][0] is None:
        return Step.CONSENT
    status = rows[0][1]
    if status == ProfileStatus.SUSPENDED:
        return Step.SUSPENDED
    statuses = {row[2] for row in rows if row[2] is not None}
    if status == ProfileStatus.APPROVED and QualificationStatus.APPROVED in statuses:
        return Step.READY
    if not statuses:
        return Step.CHARACTERS
    if statuses & {QualificationStatus.CLAIMED, QualificationStatus.FAILED}:
        return Step.QUIZ
    if QualificationStatus.PASSED in statuses:
        return Step.WAITING
    return Step.REJECTED


def qualifications_of(user) -> list[Qualification]:
    return list(
        Qualification.objects.filter(profile__user=user)
        .select_related("character")
        .order_by("character_id")
    )


# Progress ------------------------------------------------------------------------------


@dataclass
class Progress:
    done: int
    today: int
    remaining: int
    break_due: bool

    @property
    def total(self) -> int:
        return self.done + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def progress_of(user) -> Progress:
    now = timezone.now()
    judgments = Judgment.objects.filter(annotator=user, item__study__status=StudyStatus.OPEN)
    done = judgments.count()
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today = list(
        Judgment.objects.filter(annotator=user, submitted_at__gte=start_of_day)
        .order_by("submitted_at")
        .values_list(
            "submitted_at", "item__study__break_every_items", "item__study__break_every_minutes"
        )
    )
    remaining = _items_left(user, done)
    remaining += Assignment.objects.filter(
        annotator=user, state=AssignmentState.ACTIVE, expires_at__gt=now
    ).count()
    return Progress(
        done=done, today=len(today), remaining=remaining, break_due=is_break_due(today, now)
    )


ITEMS_LEFT_SECONDS = 120


def _items_left(user, done: int) -> int:
    """The estimate of what is left scans the study's items, too costly for every page;
    it is cached for two minutes and lowered by each judgment given since. With Redis
    down the cache answers "nothing there" (chatanime_site.cache) and it is estimated
    afresh."""
    from django.core.cache import cache

    from .services.leases import items_left_estimate

    key = f"items-left:{user.pk}"
    cached = cache.get(key)
    if cached is None:
        cached = (items_left_estimate(user), done)
        cache.set(key, cached, ITEMS_LEFT_SECONDS)
    estimate, done_then = cached
    return max(0, estimate - (done - done_then))


SESSION_GAP = timedelta(minutes=10)


def is_break_due(today: list[tuple], now) -> bool:
    """A break is due after every N items of today, or when the current sitting (no gap
    of 10 minutes) has lasted longer than the study's limit."""
    if not today:
        return False
    last_at, every_items, every_minutes = today[-1]
    if now - last_at > SESSION_GAP:
        return False
    if every_items and len(today) % every_items == 0:
        return True
    sitting_start = last_at
    for submitted_at, *_rest in reversed(today):
        if sitting_start - submitted_at > SESSION_GAP:
            break
        sitting_start = submitted_at
    return bool(every_minutes) and now - sitting_start >= timedelta(minutes=every_minutes)


# The item as the annotator sees it -----------------------------------------------------


@dataclass
class ShownAnswer:
    letter: str  # "A", "B", …: all the browser ever learns about an answer
    position: str  # "a", "b", …: used in form field names
    text: str
    question: str
    context_answer: str = ""  # round 2: this source's own round-1 answer


@dataclass
class ShownItem:
    token: str
    kind: str
    character_name: str
    character_work: str
    round: int | None
    shared_question: str  # the scenario, as one text for all answers
    answers: list[ShownAnswer] = field(default_factory=list)
    metrics: list[Metric] = field(default_factory=list)
    ask_human_guess: bool = False


def shown_item(assignment: Assignment) -> ShownItem:
    """Everything the rating page shows, and nothing that could reveal a source."""
    item = assignment.item
    block = item_block(item)
    ordered = [block.slots[slot] for slot in assignment.display_order]
    # Round-2 follow-ups react to each source's own round-1 answer: show it.
    context = block.context
    shown = ShownItem(
        token=assignment.token,
        kind=item.kind,
        character_name=item.character.name_zh,
        character_work=item.character.work_zh,
        round=item.round,
        shared_question=item.scenario.question if item.scenario_id else "",
        metrics=metrics_for(diversity=item.kind == ItemKind.DIVERSITY),
        ask_human_guess=item.kind == ItemKind.PAIR and item.study.ask_human_guess,
    )
    for index, answer in enumerate(ordered):
        round_1 = context.get(answer.source_id)
        shown.answers.append(
            ShownAnswer(
                letter=POSITIONS[index].upper(),
                position=POSITIONS[index],
                text=answer.text,
                question=answer.question,
                context_answer=round_1.text if round_1 else "",
            )
        )
    return shown


def pending_quizzes(user) -> list[Qualification]:
    return [
        q
        for q in qualifications_of(user)
        if q.status in (QualificationStatus.CLAIMED, QualificationStatus.FAILED)
    ]


# Study design ------------------------------------------------------------------------


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
    from .assignment import annotators_needed
    from .models import ItemAnswer, ItemKind

    # Per character: {scenario: [reference sets, compared sets] holding one of its answers}.
    by_scenario: dict[int, dict[int, list[int]]] = {}
    sets: dict[int, set[int]] = {}
    set_answers = ItemAnswer.objects.filter(
        item__study=study, item__kind=ItemKind.DIVERSITY
    ).values_list("item_id", "item__character_id", "answer__scenario_id", "answer__source_id")
    for item_id, character_id, scenario_id, source_id in set_answers:
        counts = by_scenario.setdefault(character_id, {}).setdefault(scenario_id, [0, 0])
        counts[0 if source_id == study.reference_source_id else 1] += 1
        sets.setdefault(character_id, set()).add(item_id)
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
    from .models import StudyMembership

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
    return approved


# Results -----------------------------------------------------------------------------


def studies_with_results():
    from .models import Study

    return Study.objects.select_related("results").order_by("-created_at")


@dataclass
class Cell:
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    annotators: int = 0
    cells: int = 0
    # False when the estimate rests on too few judgments or annotators for an interval.
    enough_data: bool = True


@dataclass
class ResultsView:
    """The results page's data, already filtered, in display order."""

    computed_at: object = None
    judgments: int = 0
    seconds: float = 0
    columns: list = field(default_factory=list)  # (key, label)
    rows: list = field(default_factory=list)  # (source, display_name, kind, [Cell per column])
    agreement: list = field(default_factory=list)  # (label, figures)
    paired: list = field(default_factory=list)  # (source, [Cell per metric])
    preferences: list = field(default_factory=list)
    strengths: list = field(default_factory=list)
    diversity: list = field(default_factory=list)
    human_guess: list = field(default_factory=list)
    position_bias: dict = field(default_factory=dict)
    annotators: list = field(default_factory=list)
    characters: list = field(default_factory=list)
    filters: dict = field(default_factory=dict)
    chart: dict = field(default_factory=dict)
    has_intervals: bool = True
    statistics: dict = field(default_factory=dict)


def results_view(study, *, character=None, round_=None, dimension=None) -> ResultsView | None:
    from dialogues.models import Character

    from .models import Dimension, Metric, StudyResults, localized

    results = StudyResults.objects.filter(study=study).first()
    if results is None:
        return None
    payload = results.payload
    metrics = list(Metric.objects.filter(for_diversity=False).order_by("position"))
    if dimension in Dimension.values:
        metrics = [m for m in metrics if m.dimension == dimension]
    dimensions = [d for d in Dimension.values if d != Dimension.OVERALL]
    if dimension in dimensions:
        dimensions = [dimension]
    dimension_labels = dict(Dimension.choices)
    columns = [(m.slug, m.label) for m in metrics] + [
        (f"dimension:{d}", str(dimension_labels[d])) for d in dimensions
    ]

    board, agreement, has_intervals = (
        payload.get("leaderboard", {}),
        payload.get("agreement", {}),
        True,
    )
    if character:
        board = payload.get("leaderboard_by_character", {}).get(str(character), {})
        agreement = payload.get("agreement_by_character", {}).get(str(character), {})
        has_intervals = "statistics" in payload
    elif round_ in ("1", "2"):
        board = payload.get("leaderboard_by_round", {}).get(round_, {})
        agreement = payload.get("agreement_by_round", {}).get(round_, {})
        # Results computed before every subset got its own intervals have none.
        has_intervals = "statistics" in payload

    sources = payload.get("sources", {})
    view = ResultsView(
        computed_at=results.computed_at,
        judgments=results.judgments,
        seconds=results.seconds,
        columns=columns,
        has_intervals=has_intervals,
        statistics=payload.get("statistics", {}),
        filters={"character": character or "", "round": round_ or "", "dimension": dimension or ""},
        characters=list(Character.objects.filter(pk__in=study.characters.all()).order_by("pk")),
    )
    order = sorted(
        board,
        key=lambda slug: -(board[slug].get("dimension:emotional_support", {}).get("mean") or 0),
    )
    for slug in order:
        cells = [Cell(**board[slug].get(key, {"mean": None})) for key, _label in columns]
        info = sources.get(slug, {})
        view.rows.append((slug, info.get("display_name", slug), info.get("kind", ""), cells))
    for metric in metrics:
        figures = agreement.get(metric.slug)
        if figures:
            view.agreement.append((metric.label, figures))
    diversity_metric = Metric.objects.filter(for_diversity=True).first()
    if diversity_metric and diversity_metric.slug in agreement:
        view.agreement.append((diversity_metric.label, agreement[diversity_metric.slug]))
    for slug, per_metric in payload.get("paired_differences", {}).items():
        view.paired.append(
            (slug, [Cell(**per_metric.get(m.slug, {"mean": None})) for m in metrics])
        )
    for slug, figures in sorted(
        payload.get("preferences", {}).items(), key=lambda kv: -(kv[1]["win_rate"] or 0)
    ):
        view.preferences.append((slug, figures))
    for slug, figures in sorted(
        payload.get("bradley_terry", {}).items(), key=lambda kv: -(kv[1]["log_strength"] or -99)
    ):
        view.strengths.append((slug, figures))
    for slug, figures in sorted(
        payload.get("diversity", {}).items(), key=lambda kv: -(kv[1]["mean"] or 0)
    ):
        view.diversity.append((slug, Cell(**figures)))
    for slug, figures in sorted(
        payload.get("human_guess", {}).items(), key=lambda kv: -(kv[1]["rate"] or 0)
    ):
        view.human_guess.append((slug, figures))
    view.position_bias = payload.get("position_bias", {}).get("overall", {})
    view.annotators = sorted(
        payload.get("annotators", {}).items(), key=lambda kv: -kv[1]["judgments"]
    )
    view.chart = {
        "metrics": [m.label for m in metrics],
        "metricKeys": [m.slug for m in metrics],
        "dimensions": [str(dimension_labels[d]) for d in dimensions],
        "dimensionKeys": [f"dimension:{d}" for d in dimensions],
        "sources": [
            {
                "slug": slug,
                "label": sources.get(slug, {}).get("display_name", slug),
                "values": {key: board[slug].get(key, {}) for key, _label in columns},
            }
            for slug in order
        ],
        "ciLabel": localized("95% 置信区间", "95% CI"),
    }
    return view


def export_jobs_of(user, study, limit: int = 5) -> list[ExportJob]:
    """The user's latest export jobs for the study, newest first."""
    return list(
        ExportJob.objects.filter(requested_by=user, study=study).order_by("-created_at", "-pk")[
            :limit
        ]
    )
