"""Which item an annotator gets next, and their lease on it.

The policy, in order: only open studies (only their members, once a study has members),
only characters the annotator is approved for, caps per study (or the member's own) and
per day, never an item twice, never an answer twice within a study
(blinding across items), never more leases plus judgments on an item than the overlap;
gold items mixed in at the study's rate; the least complete character first (when the
study balances characters), then diversity sets, then items closest to complete, then
random. Sides are
counterbalanced per annotator. Correctness under concurrency comes from row locks with
SKIP LOCKED and the database's unique constraints, not from timing.
"""

import math
import random
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Case, Count, Exists, OuterRef, Q, Sum, When
from django.utils import timezone
from django.utils.translation import gettext as _

from ..assignment import items_one_annotator_can_take_per_scenario, left_first
from ..models import (
    AnswerExposure,
    Assignment,
    AssignmentState,
    Item,
    ItemExposure,
    ItemKind,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
    StudyMembership,
    StudyStatus,
)
from .errors import AnnotationError
from .text import plain_text

CANDIDATES = 20


def approved_character_ids(user) -> list[int]:
    return list(
        Qualification.objects.filter(
            profile__user=user,
            profile__status=ProfileStatus.APPROVED,
            status=QualificationStatus.APPROVED,
        ).values_list("character_id", flat=True)
    )


def _current_lease(user, now, only_study) -> Assignment | None:
    leases = Assignment.objects.filter(
        annotator=user,
        state=AssignmentState.ACTIVE,
        expires_at__gt=now,
        item__study__status=StudyStatus.OPEN,
    )
    if only_study is not None:
        leases = leases.filter(item__study=only_study)
    return leases.select_related("item__study").order_by("served_at").first()


def _studies_with_room(user, character_ids, now, only_study=None) -> list[Study]:
    """Open studies with the annotator's characters whose caps they have not reached.
    Each comes with `done`, `cap` (the member's own, else the study's) and
    `character_ids` (the approved characters this annotator rates in it)."""
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    # A study with members is open to its members only; their personal caps override
    # the study's.
    studies = Study.objects.filter(status=StudyStatus.OPEN, characters__in=character_ids).filter(
        ~Exists(StudyMembership.objects.filter(study=OuterRef("pk")))
        | Exists(StudyMembership.objects.filter(study=OuterRef("pk"), annotator=user))
    )
    if only_study is not None:
        studies = studies.filter(pk=only_study.pk)
    studies = list(studies.distinct())
    # The annotator's memberships, one row per assigned character (None: all of them).
    personal_caps: dict[int, int] = {}
    assigned_characters: dict[int, set[int]] = {}
    for study_id, cap, character_id in StudyMembership.objects.filter(
        annotator=user, study__in=studies
    ).values_list("study_id", "cap", "characters"):
        if cap is not None:
            personal_caps[study_id] = cap
        if character_id is not None:
            assigned_characters.setdefault(study_id, set()).add(character_id)
    counts = {
        row["item__study"]: row
        for row in Judgment.objects.filter(annotator=user, item__study__in=studies)
        .values("item__study")
        .annotate(
            done=Count("pk"), done_today=Count("pk", filter=Q(submitted_at__gte=start_of_day))
        )
    }
    with_room = []
    for study in studies:
        study.done = counts.get(study.pk, {}).get("done", 0)
        done_today = counts.get(study.pk, {}).get("done_today", 0)
        study.cap = personal_caps.get(study.pk, study.cap_per_annotator)
        if study.cap and study.done >= study.cap:
            continue
        study.character_ids = list(character_ids)
        if study.pk in assigned_characters:
            study.character_ids = [c for c in character_ids if c in assigned_characters[study.pk]]
            if not study.character_ids:
                continue
        if study.cap_per_annotator_per_day and done_today >= study.cap_per_annotator_per_day:
            continue
        with_room.append(study)
    return with_room


def _gold_due(study: Study) -> bool:
    """Gold items at exactly the study's rate: the n-th judgment is gold when the running
    count of gold owed, n x rate, passes a whole number."""
    if study.gold_rate <= 0:
        return False
    n = study.done
    return math.floor((n + 1) * study.gold_rate) > math.floor(n * study.gold_rate)


def available_items(user, study: Study, character_ids, now, *, gold: bool = False):
    """Items this annotator could be given now: not leased or judged by them, showing no
    answer they have seen, and (unless gold) with room below the overlap."""
    # Items that show an answer this annotator has already seen. Built from the (few) seen
    # answers outwards, so the database probes a small set instead of every item.
    seen_answers = AnswerExposure.objects.filter(annotator=user, study=study).values("answer_id")
    blocked = ItemExposure.objects.filter(answer_id__in=seen_answers).values("item_id")
    items = (
        Item.objects.filter(study=study, character_id__in=character_ids, is_gold=gold)
        .exclude(
            pk__in=Assignment.objects.filter(annotator=user, item__study=study).values("item_id")
        )
        .exclude(pk__in=blocked)
    )
    if not gold:
        # One diversity set per character and annotator: a set costs whoever rates it the
        # pairs that show its answers, and several sets of one character would close
        # whole scenarios to them.
        with_a_set = Assignment.objects.filter(
            annotator=user, item__study=study, item__kind=ItemKind.DIVERSITY
        ).values("item__character_id")
        items = items.exclude(kind=ItemKind.DIVERSITY, character_id__in=with_a_set)
        # Live leases are few (one per annotator at work), so the items they fill up are
        # found from the leases rather than by counting leases for every item.
        leased = (
            Assignment.objects.filter(
                item__study=study, state=AssignmentState.ACTIVE, expires_at__gt=now
            )
            .values_list("item_id", "item__judgment_count")
            .annotate(n=Count("pk"))
        )
        full = [item_id for item_id, judged, n in leased if judged + n >= study.overlap]
        items = items.filter(judgment_count__lt=study.overlap).exclude(pk__in=full)
    return items


def items_left_estimate(user) -> int:
    """About how many more items this annotator can do: taking one pair of a scenario
    rules out the others that show the same answers, so pairs count once per
    (character, scenario) under the reference design and n // 2 times under round-robin;
    diversity sets once per character."""
    now = timezone.now()
    character_ids = approved_character_ids(user)
    total = 0
    for study in _studies_with_room(user, character_ids, now):
        items = available_items(user, study, study.character_ids, now)
        groups = (
            items.filter(kind=ItemKind.PAIR)
            .values("character_id", "scenario_id")
            .distinct()
            .count()
        )
        per_group = items_one_annotator_can_take_per_scenario(
            study.design, study.compared_sources.count() + 1
        )
        # At most one diversity set per character (see available_items).
        sets = items.filter(kind=ItemKind.DIVERSITY).values("character_id").distinct().count()
        left = groups * per_group + sets
        if study.cap:
            left = min(left, study.cap - study.done)
        total += left
    return total


def _candidates(user, study: Study, character_ids, now, *, gold: bool) -> list[int]:
    """Up to CANDIDATES items to try, best first: the least complete character first (when
    the study balances characters), then diversity sets, then items closest to
    completion, then at random."""
    items = available_items(user, study, character_ids, now, gold=gold)
    # Diversity sets first: a set is closed to anyone who has already seen one of its
    # answers in a pair, so late in a study nobody could take it. Then finish items
    # before starting new ones, so complete items appear early.
    diversity_first = Case(When(kind=ItemKind.DIVERSITY, then=0), default=1)
    order = [diversity_first, "-judgment_count", "?"]
    if not study.balance_characters or gold:
        return list(items.order_by(*order).values_list("pk", flat=True)[:CANDIDATES])
    # One character at a time: sorting one character's items is cheap, sorting a whole
    # study's (24,000 for the published data) on every request is not, and the first
    # character nearly always has enough.
    found: list[int] = []
    for character_id in _characters_by_need(study, character_ids):
        found += (
            items.filter(character_id=character_id)
            .order_by(*order)
            .values_list("pk", flat=True)[: CANDIDATES - len(found)]
        )
        if len(found) >= CANDIDATES:
            break
    return found


def _characters_by_need(study: Study, character_ids) -> list[int]:
    """The annotator's characters, the one with the smallest share of its judgments done
    first."""
    progress = (
        Item.objects.filter(study=study, is_gold=False, character_id__in=character_ids)
        .values("character_id")
        .annotate(done=Sum("judgment_count"), items=Count("pk"))
    )
    ranked = sorted(
        progress,
        key=lambda row: (row["done"] / (row["items"] * study.overlap), row["character_id"]),
    )
    return [row["character_id"] for row in ranked]


def _side_imbalance(user, study: Study) -> dict[int, int]:
    """Per source: how many more times it was on this annotator's left than right."""
    imbalance: dict[int, int] = {}
    leases = Assignment.objects.filter(annotator=user, item__study=study, left_source__isnull=False)
    for source_id, n in leases.values_list("left_source").annotate(n=Count("pk")):
        imbalance[source_id] = imbalance.get(source_id, 0) + n
    for source_id, n in leases.values_list("right_source").annotate(n=Count("pk")):
        imbalance[source_id] = imbalance.get(source_id, 0) - n
    return imbalance


def _lease(user, item_id: int, study: Study, now, *, gold: bool) -> Assignment | None:
    # The character, scenario and study come along for the rating page; only the item's
    # own row is locked.
    item = (
        Item.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("character", "scenario", "study")
        .filter(pk=item_id)
        .first()
    )
    if item is None:
        return None  # another annotator is leasing it right now
    if not gold:
        active = item.assignments.filter(state=AssignmentState.ACTIVE, expires_at__gt=now).count()
        if item.judgment_count + active >= study.overlap:
            return None
    slots = list(item.slots.select_related("answer").order_by("slot"))
    if item.kind == ItemKind.PAIR:
        order = left_first(
            [s.answer.source_id for s in slots], _side_imbalance(user, study), random.random()
        )
        left, right = slots[order[0]].answer.source_id, slots[order[1]].answer.source_id
    else:
        order = [s.slot for s in slots]
        random.shuffle(order)
        left = right = None
    try:
        with transaction.atomic():
            # The unique constraint makes a second, concurrent lease of the same answers
            # by the same annotator fail here instead of showing an answer twice.
            AnswerExposure.objects.bulk_create(
                AnswerExposure(annotator=user, study=study, answer_id=answer_id)
                for answer_id in item.exposures.values_list("answer_id", flat=True)
            )
            return Assignment.objects.create(
                item=item,
                annotator=user,
                display_order=order,
                served_at=now,
                expires_at=now + timedelta(minutes=study.lease_minutes),
                left_source_id=left,
                right_source_id=right,
            )
    except IntegrityError:
        return None


@transaction.atomic
def assignment_next(*, user, study: Study | None = None) -> Assignment | None:
    """The annotator's current lease, or a new one on the item that most needs them
    (within `study` when given)."""
    now = timezone.now()
    current = _current_lease(user, now, study)
    if current is not None:
        return current
    character_ids = approved_character_ids(user)
    if not character_ids:
        return None
    for candidate_study in _studies_with_room(user, character_ids, now, study):
        kinds = [True, False] if _gold_due(candidate_study) else [False]
        for gold in kinds:
            for item_id in _candidates(
                user, candidate_study, candidate_study.character_ids, now, gold=gold
            ):
                lease = _lease(user, item_id, candidate_study, now, gold=gold)
                if lease is not None:
                    return lease
    return None


def leases_expire() -> int:
    """Housekeeping for the beat schedule: mark leases past their expiry. Correctness never
    depends on it; every check compares `expires_at` with the clock."""
    return Assignment.objects.filter(
        state=AssignmentState.ACTIVE, expires_at__lte=timezone.now()
    ).update(state=AssignmentState.EXPIRED)


@transaction.atomic
def assignment_skip(*, user, token: str, reason: str) -> Assignment:
    assignment = _active_assignment_for_update(user=user, token=token)
    reason = plain_text(reason, 200)
    if not reason:
        raise AnnotationError("skip_reason", _("Please say why you skip this item."))
    assignment.state = AssignmentState.SKIPPED
    assignment.skip_reason = reason
    assignment.save(update_fields=["state", "skip_reason"])
    return assignment


def assignment_check_active(*, user, token: str) -> Assignment:
    """The live lease behind `token`, or AnnotationError saying why it is not live."""
    with transaction.atomic():
        return _active_assignment_for_update(user=user, token=token)


def _active_assignment_for_update(*, user, token: str) -> Assignment:
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("item__study")
        .filter(token=token, annotator=user)
        .first()
    )
    if assignment is None:
        raise AnnotationError("not_yours", _("This item is not assigned to you."))
    if assignment.state == AssignmentState.SUBMITTED:
        raise AnnotationError("already_submitted", _("You have already submitted this item."))
    if assignment.state == AssignmentState.SKIPPED:
        raise AnnotationError("skipped", _("You skipped this item."))
    if assignment.state == AssignmentState.EXPIRED or assignment.expires_at <= timezone.now():
        raise AnnotationError(
            "lease_expired",
            _("Your time for this item ran out and it went back to the pool. Nothing was saved."),
        )
    if assignment.item.study.status != StudyStatus.OPEN:
        raise AnnotationError("study_closed", _("This study is not open any more."))
    return assignment
