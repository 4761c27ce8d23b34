"""Which items an annotator may take next, and in what order: the read half of the
assignment policy (see `services.leases` for the whole policy and the lease itself).

Eligibility: open studies with room for this annotator (their membership, caps per study
and day, never a study holding answers they wrote), approved characters, items not yet
seen, answers not yet seen in the study, overlap not exceeded; ordering: least complete
character, diversity sets, closest to complete, random, with a look-ahead where a greedy
choice could strand judgments; sides counterbalanced per annotator."""

import math
import time
from collections import Counter

from django.db.models import Case, Count, Exists, OuterRef, Q, Sum, When
from django.utils import timezone
from django.utils.crypto import salted_hmac

from ..assignment import (
    ItemGroup,
    Taker,
    items_one_annotator_can_take_per_scenario,
    stranding_costs,
)
from ..models import (
    AnswerExposure,
    Assignment,
    AssignmentState,
    Item,
    ItemAnswer,
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
from .studies import annotators_needed_by_character, study_raters

CANDIDATES = 20
# The next item is chosen with a look-ahead over more candidates (`_stranding_costs`)
# where a greedy choice can cost a judgment nobody can make up: near the end of a
# character's work (at most LOOKAHEAD_SHARE of its judgments left), and throughout for a
# character staffed with about the annotators it needs (at most LOOKAHEAD_STAFFING times
# as many), where every annotator must take an item in every scenario they still can.
# Elsewhere any choice leaves enough room, and the look-ahead's reads (up to eight queries)
# would only slow every request down.
LOOKAHEAD_SHARE = 0.25
LOOKAHEAD_STAFFING = 1.5
LOOKAHEAD_CANDIDATES = 100
# How long a process trusts its count of a study's annotators (see `_tightly_staffed`).
STAFFING_CHECK_SECONDS = 60
_staffing: dict[tuple[int, object], tuple[float, frozenset[int]]] = {}


def approved_character_ids(user) -> list[int]:
    return list(
        Qualification.objects.filter(
            profile__user=user,
            profile__status=ProfileStatus.APPROVED,
            status=QualificationStatus.APPROVED,
        ).values_list("character_id", flat=True)
    )


def current_lease(user, now, only_study) -> Assignment | None:
    leases = Assignment.objects.filter(
        annotator=user,
        state=AssignmentState.ACTIVE,
        expires_at__gt=now,
        item__study__status=StudyStatus.OPEN,
    )
    if only_study is not None:
        leases = leases.filter(item__study=only_study)
    return leases.select_related("item__study").order_by("served_at").first()


def studies_with_room(user, character_ids, now, only_study=None) -> list[Study]:
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
    # Nobody rates a study that contains answers they wrote themselves.
    studies = studies.exclude(
        Exists(ItemAnswer.objects.filter(item__study=OuterRef("pk"), answer__author=user))
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


def gold_due(study: Study) -> bool:
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
    for study in studies_with_room(user, character_ids, now):
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


def candidate_items(user, study: Study, character_ids, now, *, gold: bool) -> list[int]:
    """Up to CANDIDATES items to try, best first: the least complete character first (when
    the study balances characters), then diversity sets, then items closest to
    completion, then at random. Near the end of a character's work, items whose taking
    would leave others' work undoable go last (see `_stranding_costs`)."""
    items = available_items(user, study, character_ids, now, gold=gold)
    # Diversity sets first: a set is closed to anyone who has already seen one of its
    # answers in a pair, so late in a study nobody could take it. Then finish items
    # before starting new ones, so complete items appear early.
    diversity_first = Case(When(kind=ItemKind.DIVERSITY, then=0), default=1)
    order = [diversity_first, "-judgment_count", "?"]
    if gold:
        return list(items.order_by(*order).values_list("pk", flat=True)[:CANDIDATES])
    progress = _character_progress(study, character_ids)
    tight = _tightly_staffed(study)
    if not study.balance_characters:
        if not _look_ahead(progress, tight, character_ids):
            return list(items.order_by(*order).values_list("pk", flat=True)[:CANDIDATES])
        ids = list(items.order_by(*order).values_list("pk", flat=True)[:LOOKAHEAD_CANDIDATES])
        return _least_stranding_first(user, study, ids, now)
    # One character at a time: sorting one character's items is cheap, sorting a whole
    # study's (24,000 for the published data) on every request is not, and the first
    # character nearly always has enough.
    found: list[int] = []
    stranding: list[int] = []
    for character_id in _characters_by_need(study, progress):
        by_character = items.filter(character_id=character_id).order_by(*order)
        if not _look_ahead(progress, tight, [character_id]):
            found += by_character.values_list("pk", flat=True)[: CANDIDATES - len(found)]
        else:
            ids = list(by_character.values_list("pk", flat=True)[:LOOKAHEAD_CANDIDATES])
            costs = _stranding_costs(user, study, ids, now)
            found += [item for item in ids if not costs.get(item)]
            # Taken only if nothing else is left: the annotator still gives a judgment.
            stranding += sorted((item for item in ids if costs.get(item)), key=costs.get)
        if len(found) >= CANDIDATES:
            break
    return found + stranding


def _character_progress(study: Study, character_ids) -> dict[int, tuple[int, int]]:
    """Per character: judgments given and judgments wanted."""
    progress = (
        Item.objects.filter(study=study, is_gold=False, character_id__in=character_ids)
        .values("character_id")
        .annotate(done=Sum("judgment_count"), items=Count("pk"))
    )
    return {
        row["character_id"]: (row["done"] or 0, row["items"] * study.overlap) for row in progress
    }


def _characters_by_need(study: Study, progress: dict[int, tuple[int, int]]) -> list[int]:
    """The annotator's characters, the one with the smallest share of its judgments done
    first."""
    return sorted(progress, key=lambda c: (progress[c][0] / max(1, progress[c][1]), c))


def _look_ahead(progress: dict[int, tuple[int, int]], tight: frozenset[int], character_ids) -> bool:
    if tight.intersection(character_ids):
        return True
    done = sum(progress.get(c, (0, 0))[0] for c in character_ids)
    wanted = sum(progress.get(c, (0, 0))[1] for c in character_ids)
    return wanted > 0 and wanted - done <= LOOKAHEAD_SHARE * wanted


def _tightly_staffed(study: Study) -> frozenset[int]:
    """The study's characters with at least the annotators they need but at most
    LOOKAHEAD_STAFFING times as many. With fewer the study cannot finish whatever the
    order (staff see it on the capacity page); with more there is slack until the end.
    Counted at most once a minute per process: staffing changes when staff approve
    annotators, not from one request to the next."""
    key = (study.pk, study.created_at)
    checked = _staffing.get(key)
    if checked is not None and time.monotonic() - checked[0] < STAFFING_CHECK_SECONDS:
        return checked[1]
    needed = annotators_needed_by_character(study)
    raters = Counter(
        study_raters(study, list(needed)).values_list("character_id", flat=True)
    )
    tight = frozenset(c for c, n in needed.items() if n <= raters[c] <= LOOKAHEAD_STAFFING * n)
    _staffing[key] = (time.monotonic(), tight)
    return tight


def _least_stranding_first(user, study: Study, candidate_ids: list[int], now) -> list[int]:
    costs = _stranding_costs(user, study, candidate_ids, now)
    return sorted(candidate_ids, key=lambda item: costs.get(item, 0))


def _stranding_costs(user, study: Study, candidate_ids: list[int], now) -> dict[int, int]:
    """Per candidate pair: how many of its scenario's open judgments nobody could give if
    this annotator took it now (`assignment.stranding_costs`). The scenario's items, who
    else may rate them and what they have seen are read here, in a handful of queries:
    this runs only near the end of a character's work, where a wrong choice costs a
    judgment nobody can make up."""
    group_of = {
        pk: (character_id, scenario_id)
        for pk, character_id, scenario_id in Item.objects.filter(
            pk__in=candidate_ids, kind=ItemKind.PAIR
        ).values_list("pk", "character_id", "scenario_id")
    }
    if not group_of:
        return {}
    wanted_groups = set(group_of.values())
    characters = {c for c, _s in wanted_groups}
    group_items = Item.objects.filter(
        study=study,
        kind=ItemKind.PAIR,
        is_gold=False,
        character_id__in=characters,
        scenario_id__in={s for _c, s in wanted_groups},
    )
    exposures: dict[int, set[int]] = {}
    judged: dict[int, int] = {}
    items_of: dict[tuple[int, int], list[int]] = {}
    for (
        item_id,
        character_id,
        scenario_id,
        judgment_count,
        answer_id,
    ) in ItemExposure.objects.filter(item__in=group_items).values_list(
        "item_id", "item__character_id", "item__scenario_id", "item__judgment_count", "answer_id"
    ):
        group = (character_id, scenario_id)
        if group not in wanted_groups:
            continue
        if item_id not in exposures:
            exposures[item_id] = set()
            judged[item_id] = judgment_count
            items_of.setdefault(group, []).append(item_id)
        exposures[item_id].add(answer_id)
    leased = Counter(
        Assignment.objects.filter(
            item_id__in=list(exposures), state=AssignmentState.ACTIVE, expires_at__gt=now
        ).values_list("item_id", flat=True)
    )
    # Everyone who has had one of these items, and everyone who has seen their answers.
    taken = Counter(
        ((annotator_id, (character_id, scenario_id)))
        for annotator_id, character_id, scenario_id in Assignment.objects.filter(
            item_id__in=list(exposures)
        ).values_list("annotator_id", "item__character_id", "item__scenario_id")
    )
    seen: dict[int, set[int]] = {}
    for annotator_id, answer_id in AnswerExposure.objects.filter(
        study=study, answer_id__in={a for answers in exposures.values() for a in answers}
    ).values_list("annotator_id", "answer_id"):
        seen.setdefault(annotator_id, set()).add(answer_id)
    raters: dict[int, list[int]] = {}
    for annotator_id, character_id in study_raters(study, characters).values_list(
        "profile__user_id", "character_id"
    ):
        raters.setdefault(character_id, []).append(annotator_id)
    if study.cap_per_annotator:
        # Whoever has reached the study's cap takes nothing more.
        done = Counter(
            Judgment.objects.filter(item__study=study).values_list("annotator_id", flat=True)
        )
        raters = {
            c: [a for a in people if done[a] < study.cap_per_annotator]
            for c, people in raters.items()
        }
    per_scenario = items_one_annotator_can_take_per_scenario(
        study.design, study.compared_sources.count() + 1
    )

    def taker(annotator_id: int, group: tuple[int, int], answers: frozenset[int]) -> Taker:
        return Taker(
            capacity=per_scenario - taken[(annotator_id, group)],
            seen=frozenset(seen.get(annotator_id, set()) & answers),
        )

    groups: dict[tuple[int, int], ItemGroup] = {}
    for group, item_ids in items_of.items():
        answers = frozenset(a for item in item_ids for a in exposures[item])
        groups[group] = ItemGroup(
            open_slots={item: study.overlap - judged[item] - leased[item] for item in item_ids},
            exposures={item: frozenset(exposures[item]) for item in item_ids},
            me=taker(user.pk, group, answers),
            others=[
                taker(annotator_id, group, answers)
                for annotator_id in raters.get(group[0], [])
                if annotator_id != user.pk
            ],
        )
    return stranding_costs(
        candidate_ids, {pk: groups[group] for pk, group in group_of.items() if group in groups}
    )


def side_imbalance(user, study: Study) -> tuple[dict[int, int], int, list[int]]:
    """Per source: how many more times it was on this annotator's left than right; how
    many pairs they have been shown (their position in the side schedule); and which
    slot was on the left in their last two pairs, oldest first."""
    imbalance: dict[int, int] = {}
    shown = 0
    recent: list[int] = []
    leases = Assignment.objects.filter(annotator=user, item__study=study, left_source__isnull=False)
    # One query, one short row per pair this annotator was shown in the study: the
    # order is needed for the last two sides.
    for left, right, order in leases.order_by("served_at", "pk").values_list(
        "left_source", "right_source", "display_order"
    ):
        imbalance[left] = imbalance.get(left, 0) + 1
        imbalance[right] = imbalance.get(right, 0) - 1
        shown += 1
        recent = [*recent[-1:], order[0]]
    return imbalance, shown, recent


def side_schedule_seed(user, study: Study) -> str:
    # Keyed with the site's secret: an annotator who could compute their own schedule
    # could tell where the reference answer will be.
    return salted_hmac("annotation.sides", f"{study.pk}:{user.pk}", algorithm="sha256").hexdigest()


