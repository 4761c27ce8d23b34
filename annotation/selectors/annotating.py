"""What the rating page reads: metric definitions, an item's answers as the annotator sees
them, the lease at work (the progress line and breaks: `progress`)."""

import copy
import logging
from dataclasses import dataclass, field
from typing import NamedTuple

from django.utils import timezone

from common.kept import Kept
from dialogues.models import Answer

from .. import sql
from ..models import (
    Assignment,
    AssignmentState,
    Item,
    ItemKind,
    Metric,
    Study,
    StudyStatus,
    WorkerHeartbeat,
)
from ..pairing import POSITIONS
from .screening import ready_condition

logger = logging.getLogger(__name__)


# Metric definitions are read on every rating request and change only when staff edit a
# label, so each process keeps them for a minute instead of asking the database each time.
METRICS_CACHE_SECONDS = 60
_metrics: Kept[list[Metric]] = Kept(METRICS_CACHE_SECONDS)


def metrics_for(*, diversity: bool) -> list[Metric]:
    """The metrics of a pair item (diversity=False) or a diversity set, in display order."""
    return _metrics.read(
        diversity,
        lambda: list(Metric.objects.filter(for_diversity=diversity).order_by("position")),
    )


def metrics_cache_clear(**_signal_arguments) -> None:
    """Forget this process's cached metric definitions and item blocks."""
    _metrics.forget()
    _item_blocks.forget()


# An item's answers, as every lease, rating page and submission of it needs them. An item's
# slots and exposures never change once the study is open; an answer's text changes only
# when a corrected file is imported, which shows here within a minute.
ITEM_BLOCK_SECONDS = 60
ITEM_BLOCKS_KEPT = 4000
# Each entry: the block, and the item's row with its character and scenario (see
# `item_shown`).
_item_blocks: Kept[tuple["ItemBlock", Item]] = Kept(ITEM_BLOCK_SECONDS, most=ITEM_BLOCKS_KEPT)


@dataclass(frozen=True)
class ItemBlock:
    slots: dict[int, Answer]  # slot -> the answer rated in it
    exposed_answer_ids: list[int]  # everything the item shows, round-1 context included
    context: dict[int, Answer]  # source id -> its round-1 answer (round-2 pairs only)


def item_block(item) -> ItemBlock:
    kept = _kept(item.pk)
    return kept[0] if kept is not None else _block_of(item, [])


def item_shown(item_id: int) -> tuple[ItemBlock, Item] | None:
    """The item's block and a copy of its row with its character and scenario, as the
    rating page shows them; None for an item without answers. The row's `judgment_count`,
    `is_gold` (staff may change it) and study are as they were read: whoever needs them
    current reads them, as the lease and the submission do."""
    kept = _kept(item_id)
    if kept is None:
        return None
    block, item = kept
    # A copy: the kept row is shared by every request of this process.
    return block, copy.copy(item)


def _kept(item_id: int) -> tuple[ItemBlock, Item] | None:
    return item_blocks([item_id]).get(item_id)


def item_blocks(item_ids) -> dict[int, tuple[ItemBlock, Item]]:
    """The blocks of these items with their rows: the process's copies where they are
    fresh, the others read in one query (`item_blocks_load`). Shared by every request of
    the process: not to be changed."""
    found: dict[int, tuple[ItemBlock, Item]] = {}
    missing = []
    for item_id in item_ids:
        kept = _item_blocks.get(item_id)
        if kept is not None:
            found[item_id] = kept
        else:
            missing.append(item_id)
    if missing:
        found.update(item_blocks_load(missing))
    return found


def item_blocks_load(item_ids) -> dict[int, tuple[ItemBlock, Item]]:
    """The blocks of these items, read in one query and kept like `item_block`'s, each
    with its item row and that row's character and scenario. Written out (see
    `annotation.sql`): every plan reads its candidates' blocks, and every lease near the
    end of a character's work its own; built by the ORM, the query and its rows cost
    more than the database took to answer it."""
    from dialogues.models import Character, Scenario

    params = list(item_ids)
    # One placeholder per item rather than one array (`sql.any_of`): for an array
    # PostgreSQL keeps planning this five-table join afresh on every execution (a
    # millisecond, five times the read of one item's block), and a lease near the end of
    # a character's work reads one block each time.
    items = f"e.item_id IN ({', '.join(['%s'] * len(params))})" if params else "1 = 0"
    # The exposures are the rated answers plus, in round 2, each one's round-1 answer; a
    # rated answer carries its slot.
    rows = sql.rows(
        f"SELECT ia.slot, {sql.columns(Item, 'i')}, {sql.columns(Character, 'c')},"
        f" {sql.columns(Scenario, 's')}, {sql.columns(Answer, 'a')}"
        " FROM annotation_itemexposure e"
        " JOIN annotation_item i ON i.id = e.item_id"
        " JOIN dialogues_character c ON c.id = i.character_id"
        " LEFT JOIN dialogues_scenario s ON s.id = i.scenario_id"
        " JOIN dialogues_answer a ON a.id = e.answer_id"
        " LEFT JOIN annotation_itemanswer ia"
        "  ON ia.item_id = e.item_id AND ia.answer_id = e.answer_id"
        f" WHERE {items} ORDER BY e.id",
        params,
    )
    exposures: dict[int, tuple[Item, list[tuple[Answer, int | None]]]] = {}
    for slot, *values in rows:
        item_row, character_row, scenario_row, answer_row = sql.parts(
            values, Item, Character, Scenario, Answer
        )
        item_id = item_row[0]
        if item_id not in exposures:
            item = sql.instance(Item, item_row)
            item.character = sql.instance(Character, character_row)
            if item.scenario_id is not None:
                item.scenario = sql.instance(Scenario, scenario_row)
            exposures[item_id] = (item, [])
        exposures[item_id][1].append((sql.instance(Answer, answer_row), slot))
    loaded = {}
    for item_id, (item, shown) in exposures.items():
        loaded[item_id] = _item_blocks.keep(item_id, (_block_of(item, shown), item))
    return loaded


def _block_of(item, exposures: list[tuple[Answer, int | None]]) -> ItemBlock:
    """The block of `item` from the answers it shows, each with its slot (None for a
    round-1 answer shown as context)."""
    exposed = [answer for answer, _slot in exposures]
    slot_of = {answer.pk: slot for answer, slot in exposures if slot is not None}
    return ItemBlock(
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


class LeaseAtWork(NamedTuple):
    assignment: Assignment | None
    # Whether the annotator may rate now (`screening.annotator_step` is READY); None when
    # there is no such lease, and so nothing was read.
    ready: bool | None = None
    # Whether they hold another live lease in an open study (another tab's): after this
    # one is submitted, the next item is that lease rather than a new one.
    other_live_lease: bool | None = None


def own_lease(user, token: str) -> Assignment | None:
    """This annotator's lease behind `token`, or None (another annotator's token reads as
    none), with its item and study (see `lease_at_work`)."""
    return lease_at_work(user, token).assignment


def lease_at_work(user, token: str) -> LeaseAtWork:
    """This annotator's lease behind `token` and whether they may rate now. Read on every
    rating page and submission, in one written statement (see `annotation.sql`): the
    lease, its item's gold mark and count (which staff and other annotators change), its
    study (status, rules), the annotator's standing and whether they hold another live
    lease (which spares the submission's next item a query of its own); the rest of the
    item, with its character and scenario, is the process's copy (`item_shown`)."""
    ready = ready_condition("a.annotator_id")
    row = sql.first_row(
        f"SELECT {sql.columns(Assignment, 'a')}, i.is_gold, i.judgment_count, {ready},"
        " EXISTS (SELECT 1 FROM annotation_assignment o"
        "  JOIN annotation_item oi ON oi.id = o.item_id"
        "  JOIN annotation_study os ON os.id = oi.study_id"
        "  WHERE o.annotator_id = a.annotator_id AND o.id <> a.id"
        f"  AND o.state = {sql.literal(AssignmentState.ACTIVE)} AND o.expires_at > %s"
        f"  AND os.status = {sql.literal(StudyStatus.OPEN)}),"
        f" {sql.columns(Study, 's')} FROM annotation_assignment a"
        " JOIN annotation_item i ON i.id = a.item_id"
        " JOIN annotation_study s ON s.id = i.study_id"
        " WHERE a.token = %s AND a.annotator_id = %s",
        [
            sql.db_moment(timezone.now()),
            token,
            user.pk,
        ],
    )
    if row is None:
        return LeaseAtWork(None)
    width = len(Assignment._meta.concrete_fields)
    assignment = sql.instance(Assignment, row[:width])
    is_gold, judgment_count, annotator_ready, other_live_lease = row[width : width + 4]
    study = sql.instance(Study, row[width + 4 :])
    shown = item_shown(assignment.item_id)
    # A leased item has answers: `leases._lease` serves no other.
    assert shown is not None, assignment.item_id
    item = shown[1]
    item.is_gold, item.judgment_count, item.study = bool(is_gold), judgment_count, study
    assignment.item = item
    return LeaseAtWork(assignment, bool(annotator_ready), bool(other_live_lease))


def form_fields_of(assignment: Assignment) -> tuple[list[str], list[Metric]]:
    """The positions and metrics of the rating form for this lease, without its texts."""
    if assignment.item.kind == ItemKind.PAIR:
        return list(POSITIONS[: len(assignment.display_order)]), metrics_for(diversity=False)
    return ["set"], metrics_for(diversity=True)


def last_worker_heartbeat() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.order_by("-seen_at").first()


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
