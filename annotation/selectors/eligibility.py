"""Which items an annotator may take next, and in what order: the read half of the
assignment policy (see `services.leases` for the whole policy and the lease itself).

Eligibility: open studies with room for this annotator (their membership, caps per study
and day, never a study holding answers they wrote), approved characters, items not yet
seen, answers not yet seen in the study, overlap not exceeded; ordering: least complete
character, diversity sets, closest to complete, random, with a look-ahead where a greedy
choice could strand judgments (`ordering`, `lookahead`); sides counterbalanced per
annotator."""

import math
import time
from dataclasses import dataclass, field

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery, Sum
from django.utils import timezone
from django.utils.crypto import salted_hmac

from .. import sql
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
from ..pairing import items_one_annotator_can_take_per_scenario


def current_lease(user, now, only_study) -> Assignment | None:
    """The annotator's oldest live lease in an open study (in `only_study` when given).
    Asked before every new lease and nearly always answered "none": one written statement
    (see `annotation.sql`); a lease found comes without its item, which is read when used."""
    found = Assignment.objects.raw(
        "SELECT a.* FROM annotation_assignment a"
        " JOIN annotation_item i ON i.id = a.item_id"
        " JOIN annotation_study s ON s.id = i.study_id"
        " WHERE a.annotator_id = %s AND a.state = %s AND a.expires_at > %s AND s.status = %s"
        + (" AND s.id = %s" if only_study is not None else "")
        + " ORDER BY a.served_at LIMIT 1",
        [
            user.pk,
            AssignmentState.ACTIVE.value,
            sql.db_moment(now),
            StudyStatus.OPEN.value,
            *([only_study.pk] if only_study is not None else []),
        ],
    )
    return next(iter(found), None)


def studies_with_room(user, now, only_study=None, *, with_progress: bool = True) -> list[Study]:
    """Open studies with room for this annotator, read in one query of one row per study
    and character they may rate in it, and one of their judgments per study. Each comes
    with `done`, `done_today`, `cap` (the member's own, else the study's), `character_ids`
    (the approved characters this annotator rates in it) and, unless `with_progress` is
    False, `progress` (per character with items: judgments given and wanted; one more
    query per study)."""
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    study = OuterRef("study_id")
    character = OuterRef("character_id")
    membership = StudyMembership.objects.filter(study=study, annotator=user)
    assigned = StudyMembership.characters.through.objects.filter(
        studymembership__study=study, studymembership__annotator=user
    )
    rows = (
        Study.characters.through.objects.filter(study__status=StudyStatus.OPEN)
        .filter(
            Exists(
                Qualification.objects.filter(
                    profile__user=user,
                    profile__status=ProfileStatus.APPROVED,
                    status=QualificationStatus.APPROVED,
                    character_id=character,
                )
            )
        )
        # A study with members is open to its members only; their personal caps override
        # the study's, and a member assigned some characters rates only those.
        .filter(~Exists(StudyMembership.objects.filter(study=study)) | Exists(membership))
        .filter(~Exists(assigned) | Exists(assigned.filter(character_id=character)))
        # Nobody rates a study that contains answers they wrote themselves. Found from
        # their own (few) answers outwards, once: probing every study's item answers for
        # their author reads the whole study (48,000 rows for the published data).
        .exclude(
            study_id__in=ItemAnswer.objects.filter(answer__author=user).values("item__study_id")
        )
        .select_related("study")
        .annotate(member_cap=Subquery(membership.values("cap")[:1]))
        .order_by("study_id", "character_id")
    )
    if only_study is not None:
        rows = rows.filter(study=only_study)
    studies: dict[int, Study] = {}
    for row in rows:
        if row.study_id not in studies:
            studies[row.study_id] = _with_cap(row)
        studies[row.study_id].character_ids.append(row.character_id)
    done = _judgments_by_study(user, start_of_day) if studies else {}
    for study_id, study in studies.items():
        study.done, study.done_today = done.get(study_id, (0, 0))
    with_room = [study for study in studies.values() if _room_left(study)]
    for study in with_room if with_progress else []:
        progress = character_progress(study)
        study.progress = {c: progress[c] for c in study.character_ids if c in progress}
    return with_room


def character_progress(study: Study) -> dict[int, tuple[int, int]]:
    """Per character with items (gold aside): judgments given and judgments wanted. Read
    afresh for every plan: it orders the characters and tells when the end of a
    character's work is near, where the look-ahead must see the study as it is (kept for
    even a few seconds, it let greedy choices strand judgments in the completion tests)."""
    return {
        character_id: (done, items * study.overlap)
        for character_id, done, items in Item.objects.filter(study=study, is_gold=False)
        .order_by()
        .values("character_id")
        .annotate(done=Sum("judgment_count"), items=Count("pk"))
        .values_list("character_id", "done", "items")
    }


def _judgments_by_study(user, start_of_day) -> dict[int, tuple[int, int]]:
    """Per study: the annotator's judgments, and those given since `start_of_day`. Read
    from their own judgments outwards, in one pass: counted per study and character row
    instead, the database joined every item of the study to them, twice per row (about
    0.1 s per plan for the published data)."""
    return {
        study_id: (done, done_today)
        for study_id, done, done_today in Judgment.objects.filter(annotator=user)
        .order_by()
        .values("item__study_id")
        .annotate(
            done=Count("pk"), done_today=Count("pk", filter=Q(submitted_at__gte=start_of_day))
        )
        .values_list("item__study_id", "done", "done_today")
    }


def _with_cap(row) -> Study:
    study = row.study
    study.cap = row.member_cap if row.member_cap is not None else study.cap_per_annotator
    study.character_ids = []
    return study


def _room_left(study: Study) -> bool:
    if study.cap and study.done >= study.cap:
        return False
    daily = study.cap_per_annotator_per_day
    return not (daily and study.done_today >= daily)


def gold_due(study: Study, done: int | None = None) -> bool:
    """Gold items at exactly the study's rate: the n-th judgment is gold when the running
    count of gold owed, n x rate, passes a whole number. `done`: the annotator's judgments
    in the study, if not `study.done`."""
    if study.gold_rate <= 0:
        return False
    n = study.done if done is None else done
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
        # Every item they have had, in any study: an item belongs to one study, and
        # narrowing the leases to this one would join them to every item of the study.
        .exclude(pk__in=Assignment.objects.filter(annotator=user).values("item_id"))
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
        full = (
            Assignment.objects.filter(
                item__study=study, state=AssignmentState.ACTIVE, expires_at__gt=now
            )
            .values("item_id", "item__judgment_count")
            .annotate(n=Count("pk"))
            .filter(n__gte=study.overlap - F("item__judgment_count"))
            .values("item_id")
        )
        items = items.filter(judgment_count__lt=study.overlap).exclude(pk__in=full)
    return items


def items_left_estimate(user) -> int:
    """About how many more items this annotator can do: taking one pair of a scenario
    rules out the others that show the same answers, so each (character, scenario) with
    open pairs counts once under the reference design and n // 2 times under round-robin,
    less those where they already had an item; diversity sets once per character where
    they have had none. Open work is counted per study and shared (`open_work`); only
    what this annotator had is read for them."""
    now = timezone.now()
    total = 0
    for study in studies_with_room(user, now, with_progress=False):
        open_pairs, open_sets = open_work(study)
        had = set(
            Assignment.objects.filter(annotator=user, item__study=study)
            .order_by()
            .values_list("item__kind", "item__character_id", "item__scenario_id")
            .distinct()
        )
        had_pairs = {(c, s) for kind, c, s in had if kind == ItemKind.PAIR}
        had_sets = {c for kind, c, _s in had if kind == ItemKind.DIVERSITY}
        groups = sum(
            1
            for character_id in study.character_ids
            for scenario_id in open_pairs.get(character_id, ())
            if (character_id, scenario_id) not in had_pairs
        )
        per_group = items_one_annotator_can_take_per_scenario(
            study.design, study.compared_sources.count() + 1
        )
        sets = len(open_sets & set(study.character_ids) - had_sets)
        left = groups * per_group + sets
        if study.cap:
            left = min(left, study.cap - study.done)
        total += left
    return total


OPEN_WORK_SECONDS = 10
_open_work: dict[tuple[int, object], tuple[float, tuple[dict[int, set[int]], set[int]]]] = {}


def open_work(study: Study) -> tuple[dict[int, set[int]], set[int]]:
    """The study's work still open to someone, counted at most every OPEN_WORK_SECONDS
    per process: per character, the scenarios with pairs below the overlap; and the
    characters with a diversity set below it."""
    key = (study.pk, study.created_at)
    counted = _open_work.get(key)
    if counted is not None and time.monotonic() - counted[0] < OPEN_WORK_SECONDS:
        return counted[1]
    pairs: dict[int, set[int]] = {}
    sets: set[int] = set()
    for kind, character_id, scenario_id in (
        Item.objects.filter(study=study, is_gold=False, judgment_count__lt=study.overlap)
        .order_by()
        .values_list("kind", "character_id", "scenario_id")
        .distinct()
    ):
        if kind == ItemKind.DIVERSITY:
            sets.add(character_id)
        else:
            pairs.setdefault(character_id, set()).add(scenario_id)
    _open_work[key] = (time.monotonic(), (pairs, sets))
    return pairs, sets


@dataclass
class SideHistory:
    """The sides of the pairs this annotator was shown in a study: per source, how many
    more times it was on their left than right; how many pairs they have been shown
    (their position in the side schedule); and which slot was on the left in their last
    two pairs, oldest first."""

    imbalance: dict[int, int] = field(default_factory=dict)
    shown: int = 0
    recent: list[int] = field(default_factory=list)

    def record(self, left_source: int, right_source: int, left_slot: int) -> None:
        self.imbalance[left_source] = self.imbalance.get(left_source, 0) + 1
        self.imbalance[right_source] = self.imbalance.get(right_source, 0) - 1
        self.shown += 1
        self.recent = [*self.recent[-1:], left_slot]


def side_history(user, study: Study) -> SideHistory:
    history = SideHistory()
    leases = Assignment.objects.filter(annotator=user, item__study=study, left_source__isnull=False)
    # One query, one short row per pair this annotator was shown in the study: the
    # order is needed for the last two sides.
    for left, right, order in leases.order_by("served_at", "pk").values_list(
        "left_source", "right_source", "display_order"
    ):
        history.record(left, right, order[0])
    return history


def side_schedule_seed(user, study: Study) -> str:
    # Keyed with the site's secret: an annotator who could compute their own schedule
    # could tell where the reference answer will be.
    return salted_hmac("annotation.sides", f"{study.pk}:{user.pk}", algorithm="sha256").hexdigest()
