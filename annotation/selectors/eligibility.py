"""Which items an annotator may take next, and in what order: the read half of the
assignment policy (see `services.leases` for the whole policy and the lease itself).

Eligibility: open studies with room for this annotator (their membership, caps per study
and day, never a study holding answers they wrote), approved characters, items not yet
seen, answers not yet seen in the study, overlap not exceeded; ordering: least complete
character, diversity sets, closest to complete, random, with a look-ahead where a greedy
choice could strand judgments (`ordering`, `lookahead`); sides counterbalanced per
annotator (`sides`)."""

import math
from dataclasses import dataclass

from django.utils import timezone

from .. import sql
from ..models import (
    Assignment,
    AssignmentState,
    Item,
    ItemKind,
    ProfileStatus,
    QualificationStatus,
    Study,
    StudyStatus,
)
from ..pairing import items_one_annotator_can_take_per_scenario
from .staffing import shared, shared_forget


def current_lease(user, now, only_study) -> Assignment | None:
    """The annotator's oldest live lease in an open study (in `only_study` when given).
    Asked before every new lease and nearly always answered "none": one written statement
    (see `annotation.sql`); a lease found comes without its item, which is read when used."""
    found = Assignment.objects.raw(
        "SELECT a.* FROM annotation_assignment a"
        " JOIN annotation_item i ON i.id = a.item_id"
        " JOIN annotation_study s ON s.id = i.study_id"
        f" WHERE a.annotator_id = %s AND a.state = {sql.literal(AssignmentState.ACTIVE)}"
        f" AND a.expires_at > %s AND s.status = {sql.literal(StudyStatus.OPEN)}"
        + (" AND s.id = %s" if only_study is not None else "")
        + " ORDER BY a.served_at LIMIT 1",
        [user.pk, sql.db_moment(now), *([only_study.pk] if only_study is not None else [])],
    )
    return next(iter(found), None)


def studies_with_room(
    user, now, only_study=None, *, with_progress: bool = True, paused_too: bool = False
) -> list[Study]:
    """Open studies (and paused ones with `paused_too`) with room for this annotator, read
    in one query of one row per study and character they may rate in it, and one of their
    judgments per study. Each comes with `done`, `done_today`, `cap` (the member's own,
    else the study's), `character_ids` (the approved characters this annotator rates in
    it) and, unless `with_progress` is False, `progress` (per character with items:
    judgments given and wanted; one more query per study)."""
    statuses = (StudyStatus.OPEN, StudyStatus.PAUSED) if paused_too else (StudyStatus.OPEN,)
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    # Written out (see `annotation.sql`): asked by every plan, and built by the ORM it cost
    # about as much CPU as the rest of the plan's reads together.
    found = sql.rows(
        f"SELECT sc.character_id, m.cap, {sql.columns(Study, 's')}"
        " FROM annotation_study_characters sc"
        " JOIN annotation_study s ON s.id = sc.study_id"
        " LEFT JOIN annotation_studymembership m ON m.study_id = s.id AND m.annotator_id = %s"
        f" WHERE s.status IN ({', '.join(sql.literal(status) for status in statuses)})"
        "  AND EXISTS (SELECT 1 FROM annotation_qualification q"
        "   JOIN annotation_annotatorprofile p ON p.id = q.profile_id"
        f"   WHERE p.user_id = %s AND p.status = {sql.literal(ProfileStatus.APPROVED)}"
        f"   AND q.status = {sql.literal(QualificationStatus.APPROVED)}"
        "   AND q.character_id = sc.character_id)"
        # A study with members is open to its members only; their personal caps override
        # the study's, and a member assigned some characters rates only those. An
        # annotator who is `members_only` rates no study open to everyone: their profile
        # is read once (an uncorrelated subquery, an InitPlan in PostgreSQL's plan).
        "  AND (m.id IS NOT NULL OR (NOT EXISTS (SELECT 1 FROM annotation_annotatorprofile mp"
        "   WHERE mp.user_id = %s AND mp.members_only)"
        "   AND NOT EXISTS (SELECT 1 FROM annotation_studymembership o"
        "   WHERE o.study_id = sc.study_id)))"
        "  AND (m.id IS NULL"
        "   OR NOT EXISTS (SELECT 1 FROM annotation_studymembership_characters mc"
        "    WHERE mc.studymembership_id = m.id)"
        "   OR EXISTS (SELECT 1 FROM annotation_studymembership_characters mc"
        "    WHERE mc.studymembership_id = m.id AND mc.character_id = sc.character_id))"
        # Nobody rates a study that contains answers they wrote themselves. Found from
        # their own (few) answers outwards, once: probing every study's item answers for
        # their author reads the whole study (48,000 rows for the published data).
        "  AND sc.study_id NOT IN (SELECT i.study_id FROM annotation_itemanswer ia"
        "   JOIN dialogues_answer a ON a.id = ia.answer_id"
        "   JOIN annotation_item i ON i.id = ia.item_id WHERE a.author_id = %s)"
        + (" AND sc.study_id = %s" if only_study is not None else "")
        + " ORDER BY sc.study_id, sc.character_id",
        [user.pk, user.pk, user.pk, user.pk, *([only_study.pk] if only_study is not None else [])],
    )
    studies: dict[int, Study] = {}
    for character_id, member_cap, *study_row in found:
        study = studies.get(study_row[0])
        if study is None:
            study = studies[study_row[0]] = sql.instance(Study, study_row)
            study.cap = member_cap if member_cap is not None else study.cap_per_annotator
            study.character_ids = []
        study.character_ids.append(character_id)
    done = _judgments_by_study(user, start_of_day) if studies else {}
    for study_id, study in studies.items():
        study.done, study.done_today = done.get(study_id, (0, 0))
    with_room = [study for study in studies.values() if _room_left(study)]
    for study in with_room if with_progress else []:
        study.progress = character_progress(study, study.character_ids)
    return with_room


def character_progress(study: Study, character_ids) -> dict[int, tuple[int, int]]:
    """Per character of `character_ids` with items (gold aside): judgments given and
    judgments wanted. Read afresh for every plan, from the counts each submission keeps
    (`CharacterProgress`): it orders the characters and tells when the end of a
    character's work is near, where the look-ahead must see the study as it is (kept
    for even a few seconds, it let greedy choices strand judgments in the completion
    tests)."""
    # Written out, like the rest of a plan's fixed reads (see `annotation.sql`).
    characters, characters_params = sql.any_of("character_id", character_ids)
    return {
        character_id: (judgments, items * study.overlap)
        for character_id, judgments, items in sql.rows(
            "SELECT character_id, judgments, items FROM annotation_characterprogress"
            f" WHERE study_id = %s AND items > 0 AND {characters}",
            [study.pk, *characters_params],
        )
    }


def _judgments_by_study(user, start_of_day) -> dict[int, tuple[int, int]]:
    """Per study: the annotator's judgments, and those given since `start_of_day`. Read
    from their own judgments, in one pass: counted per study and character row instead,
    the database joined every item of the study to them, twice per row (about 0.1 s per
    plan for the published data)."""
    return {
        study_id: (done, done_today)
        for study_id, done, done_today in sql.rows(
            "SELECT j.study_id, COUNT(*),"
            " SUM(CASE WHEN j.submitted_at >= %s THEN 1 ELSE 0 END)"
            " FROM annotation_judgment j WHERE j.annotator_id = %s GROUP BY j.study_id",
            [sql.db_moment(start_of_day), user.pk],
        )
    }


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


@dataclass(frozen=True)
class Available:
    """A written condition on `annotation_item i` (see `annotation.sql`) and its
    parameters."""

    where: str
    params: list


def available_items(
    user, study: Study, character_ids, now, *, gold: bool = False, counting_leases: bool = True
) -> Available:
    """Items this annotator could be given now: not leased or judged by them, showing no
    answer they have seen, and (unless gold) with room below the overlap. Written out:
    asked by every plan, and built by the ORM it cost more CPU than the database took to
    answer it. `counting_leases=False`: room counted in judgments only (`any_item_left`)."""
    if not character_ids:
        return Available("1 = 0", [])
    characters = ", ".join(["%s"] * len(character_ids))
    where = [
        f"i.study_id = %s AND i.character_id IN ({characters}) AND i.is_gold = %s",
        # Every item they have had, in any study: an item belongs to one study, and
        # narrowing the leases to this one would join them to every item of the study.
        "i.id NOT IN (SELECT item_id FROM annotation_assignment WHERE annotator_id = %s)",
        # Items that show an answer this annotator has already seen. Built from the seen
        # answers outwards, and only those of these characters (an item shows answers of
        # its own character): after a few hundred judgments an annotator has seen about
        # a thousand answers, and the items showing any of them were found by hashing
        # every item exposure of the study (some 25 ms), where a character's few dozen
        # are probed by index. Were an item ever to show another character's answer, the
        # lease would still refuse it (`leases._expose_and_lease`).
        "i.id NOT IN (SELECT e.item_id FROM annotation_itemexposure e WHERE e.answer_id IN"
        " (SELECT x.answer_id FROM annotation_answerexposure x"
        "  JOIN dialogues_answer a ON a.id = x.answer_id"
        f"  WHERE x.annotator_id = %s AND x.study_id = %s AND a.character_id IN ({characters})))",
    ]
    params = [study.pk, *character_ids, gold, user.pk, user.pk, study.pk, *character_ids]
    if not gold:
        # One diversity set per character and annotator: a set costs whoever rates it the
        # pairs that show its answers, and several sets of one character would close
        # whole scenarios to them.
        diversity = sql.literal(ItemKind.DIVERSITY)
        where.append(
            f"NOT (i.kind = {diversity} AND i.character_id IN (SELECT d.character_id"
            " FROM annotation_assignment a JOIN annotation_item d ON d.id = a.item_id"
            f" WHERE a.annotator_id = %s AND d.study_id = %s AND d.kind = {diversity}))"
        )
        params += [user.pk, study.pk]
        in_judgments = Available("i.judgment_count < %s", [study.overlap])
        room = _room_below_overlap(study, now) if counting_leases else in_judgments
        where.append(room.where)
        params += room.params
    return Available(" AND ".join(f"({condition})" for condition in where), params)


def _room_below_overlap(study: Study, now) -> Available:
    """Items of `study` whose judgments and live leases leave room below its overlap.
    Live leases are few (one per annotator at work), so the items they fill up are found
    from the leases (`live_leases_by_item`) rather than by counting leases for every
    item. Each leased item's count is looked up by its key: joined to the items instead,
    the planner may read every item of the study to hash them."""
    return Available(
        "i.judgment_count < %s AND i.id NOT IN (SELECT a.item_id FROM annotation_assignment a"
        f" WHERE a.state = {sql.literal(AssignmentState.ACTIVE)} AND a.expires_at > %s"
        " GROUP BY a.item_id HAVING COUNT(*) >= %s - (SELECT f.judgment_count"
        " FROM annotation_item f WHERE f.id = a.item_id AND f.study_id = %s))",
        [study.overlap, sql.db_moment(now), study.overlap, study.pk],
    )


def any_item_left(user, study: Study, character_ids) -> bool:
    """Whether an item of `study` for these characters could still come to this annotator:
    one they have not had, showing no answer they have seen, below the overlap in
    judgments. Items others hold a live lease on count (a lease lapses, and the item comes
    back); gold items do not (given at the study's rate, never to fill a batch)."""
    available = available_items(user, study, character_ids, timezone.now(), counting_leases=False)
    found = sql.first_row(
        f"SELECT 1 FROM annotation_item i WHERE {available.where} LIMIT 1", available.params
    )
    return found is not None


def items_full(item_ids, study: Study, now) -> set[int]:
    """Which of these items have no room left now (`_room_below_overlap`, the rule every
    plan reads its candidates with). Only a hint for skipping candidates a plan still
    lists (whether a lease may be given is decided under the item's lock,
    `leases._lease`); gold items, which have no overlap to fill, are not to be asked
    about."""
    item_ids = list(item_ids)
    if not item_ids:
        return set()
    condition, params = sql.any_of("i.id", item_ids)
    room = _room_below_overlap(study, now)
    return {
        item_id
        for (item_id,) in sql.rows(
            f"SELECT i.id FROM annotation_item i WHERE {condition} AND NOT ({room.where})",
            [*params, *room.params],
        )
    }


def items_left_estimate(user) -> int:
    """About how many more items this annotator can do in open or paused studies (a pause
    is for a while: the progress line keeps their items). Taking one pair of a scenario
    rules out the others that show the same answers, so each (character, scenario) with
    open pairs counts once under the reference design and n // 2 times under round-robin,
    less those where they already had an item; diversity sets once per character where
    they have had none. Open work is counted per study and shared (`open_work`); only
    what this annotator had is read for them."""
    now = timezone.now()
    total = 0
    for study in studies_with_room(user, now, with_progress=False, paused_too=True):
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
            # The progress line adds the live lease itself; the cap's room holds it too (a
            # panel participant with a batch of 2 and one item in hand has 1 more to do).
            live = Assignment.objects.filter(
                annotator=user, item__study=study, state=AssignmentState.ACTIVE, expires_at__gt=now
            ).count()
            left = min(left, study.cap - study.done - live)
        total += max(left, 0)
    return total


OPEN_WORK_SECONDS = 10


def open_work(study: Study) -> tuple[dict[int, set[int]], set[int]]:
    """The study's work still open to someone, counted at most every OPEN_WORK_SECONDS
    and shared by every process (`staffing.shared`): per character, the scenarios with
    pairs below the overlap; and the characters with a diversity set below it."""
    return shared(_open_work_key(study), lambda: _open_work_count(study), OPEN_WORK_SECONDS)


def open_work_forget(study: Study) -> None:
    shared_forget(_open_work_key(study))


def _open_work_key(study: Study) -> tuple:
    return ("open work", study.pk, study.created_at)


def _open_work_count(study: Study) -> tuple[dict[int, set[int]], set[int]]:
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
    return pairs, sets
