"""Pairing rules, pure and without a database: which sources meet in a pair, how many
annotators a design needs, and which answer goes on the left (counterbalancing).

Not to be confused with the two other things once called "assignment": the lease model
`models.Assignment` (an annotator's hold on one item) and the staff page of a study's
members (views/staff/members.py).

Kept pure so that they can be reasoned about and property-tested on their own.
"""

import hashlib
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

POSITIONS = "abcdefgh"  # display positions; the browser only ever sees these letters

REFERENCE = "reference"
ROUND_ROBIN = "round-robin"


def source_pairs(design: str, reference: int, compared: Sequence[int]) -> list[tuple[int, int]]:
    """The pairs of sources compared within one (character, scenario, round) cell.

    `reference`: each compared source against the reference source.
    `round-robin`: every unordered pair of all sources, so that each source meets every
    other exactly once and appears in the same number of pairs (balanced).
    """
    if design == REFERENCE:
        return [(reference, source) for source in compared if source != reference]
    if design == ROUND_ROBIN:
        sources = sorted({reference, *compared})
        return list(combinations(sources, 2))
    raise ValueError(f"unknown pairing design {design!r}")


def items_one_annotator_can_take_per_scenario(design: str, n_sources: int) -> int:
    """Within a study an annotator never sees an answer twice. All items of one
    (character, scenario) that involve the same source share that source's round-1
    answer (rated in round 1, shown as context in round 2), so they exclude each other.

    `reference`: every pair involves the reference source, so one item per scenario.
    `round-robin`: items with disjoint sources can go together: at most n // 2.
    """
    return 1 if design == REFERENCE else max(1, n_sources // 2)


# Look-ahead near the end of a study ----------------------------------------------------
#
# With exactly the annotators a study needs, every annotator must take one item in every
# scenario they can still take, and some can take only a few of its items (a diversity
# set showed them one source's answers there). Greedy order then strands work: others
# fill the only items they could take. Seen as a flow problem per scenario (annotators
# on one side, open judgments on the other), an annotator should take an item that
# leaves the rest of the scenario's open judgments to people who can still take them.


@dataclass(frozen=True)
class Taker:
    """An annotator as the look-ahead sees them within one group of mutually exclusive
    items (one character and scenario): how many more of its items they may take, and
    which of the group's answers they have already seen."""

    capacity: int
    seen: frozenset[int] = frozenset()

    def can_take(self, exposed: Collection[int]) -> bool:
        return self.capacity > 0 and self.seen.isdisjoint(exposed)


def coverable_judgments(
    open_slots: Mapping[int, int],
    exposures: Mapping[int, Collection[int]],
    takers: Sequence[Taker],
) -> int:
    """The most of the open judgments (item -> judgments still wanted) that `takers` can
    give, each taking an item at most once, at most `capacity` items, and only items
    showing no answer they have seen.

    A maximum bipartite b-matching by augmenting paths (a taker of capacity c counts as c
    takers). Items that a taker's own choices would make exclusive of each other (two
    items sharing an answer) are not ruled out here: under the reference design a taker's
    capacity is 1, where that cannot arise; under round-robin the figure is an upper
    bound.
    """
    return _max_matching(open_slots, exposures, takers)[0]


def _max_matching(open_slots, exposures, takers):
    """(judgments given, holders per item, items held per taker, eligible items per taker)
    of one maximum matching."""
    open_items = [item for item, slots in open_slots.items() if slots > 0]
    # `Taker.can_take` written out: this runs for every taker and item of every group the
    # look-ahead weighs, and most takers have seen none of the group's answers: they share
    # the one list of open items (only read from here on).
    eligible = [
        (
            [item for item in open_items if t.seen.isdisjoint(exposures[item])]
            if t.seen
            else open_items
        )
        if t.capacity > 0
        else []
        for t in takers
    ]
    holders: dict[int, list[int]] = {item: [] for item in open_slots}
    held: list[set[int]] = [set() for _ in takers]

    def augment(taker: int, visited: set[int]) -> bool:
        # A free slot within reach is taken before any holder is asked to move: the
        # search then only goes deep when every item the taker may take is full.
        for item in eligible[taker]:
            if (
                item not in visited
                and item not in held[taker]
                and len(holders[item]) < open_slots[item]
            ):
                visited.add(item)
                holders[item].append(taker)
                held[taker].add(item)
                return True
        for item in eligible[taker]:
            if item in visited or item in held[taker]:
                continue
            visited.add(item)
            if len(holders[item]) < open_slots[item]:
                holders[item].append(taker)
                held[taker].add(item)
                return True
            for other in holders[item]:
                # The other holder gives this item up if they can take another instead.
                held[other].discard(item)
                if augment(other, visited):
                    holders[item].remove(other)
                    holders[item].append(taker)
                    held[taker].add(item)
                    return True
                held[other].add(item)
        return False

    given = 0
    wanted = sum(slots for item, slots in open_slots.items() if slots > 0)
    # Items that a failed search reached lead to no free slot; they stay dead ends until
    # a search succeeds and changes the matching, so failed searches share them (Kuhn's
    # algorithm with its visited marks kept between failures). With crowds larger than
    # the open slots, most searches fail, and each used to walk the whole graph again.
    dead_ends: set[int] = set()
    for taker, t in enumerate(takers):
        for _ in range(min(t.capacity, len(eligible[taker]))):
            if given == wanted:
                # Every open judgment has a holder: nobody can add one.
                return given, holders, held, eligible
            visited = set(dead_ends)
            if not augment(taker, visited):
                dead_ends = visited
                break
            dead_ends = set()
            given += 1
    return given, holders, held, eligible


def _items_taken_without_stranding(group: "ItemGroup") -> set[int] | None:
    """For an annotator who may take one more item of the group: the items they can take
    without stranding anything, or None for any of them.

    One maximum matching of the others is enough. If the annotator could not add a
    judgment to it, they are needed nowhere and any choice is free. Otherwise taking an
    item strands nothing exactly when some maximum matching of the others leaves one of
    its judgments open: it has a free slot, or one of its holders could move to an item
    that has (an alternating path), found by a search backwards from the free slots.
    """
    _given, holders, held, eligible = _max_matching(group.open_slots, group.exposures, group.others)
    takers_of: dict[int, list[int]] = {}
    for taker, items in enumerate(eligible):
        for item in items:
            takers_of.setdefault(item, []).append(taker)
    freeable = {item for item, slots in group.open_slots.items() if len(holders[item]) < slots}
    queue = list(freeable)
    while queue:
        item = queue.pop()
        for taker in takers_of.get(item, ()):
            if item in held[taker]:
                continue
            for other_item in held[taker]:
                if other_item not in freeable:
                    freeable.add(other_item)
                    queue.append(other_item)
    me = group.me
    if not any(me.can_take(group.exposures[item]) for item in freeable):
        return None
    return freeable


def stranded_by_taking(
    item: int,
    *,
    open_slots: Mapping[int, int],
    exposures: Mapping[int, Collection[int]],
    me: Taker,
    others: Sequence[Taker],
) -> int:
    """How many more of the group's open judgments nobody could give if `me` took `item`
    now than if they left the choice open. 0 means taking it strands nothing."""
    total = sum(max(0, n) for n in open_slots.values())
    before = total - coverable_judgments(open_slots, exposures, [*others, me])
    after_slots = {**open_slots, item: open_slots[item] - 1}
    after_me = Taker(me.capacity - 1, me.seen | frozenset(exposures[item]))
    after = (total - 1) - coverable_judgments(after_slots, exposures, [*others, after_me])
    return max(0, after - before)


def slack(open_judgments: int, free_others: int) -> int:
    """How many judgments to spare a group has for an annotator about to take one of its
    items, from two counts alone: its open judgments, and the other annotators who may
    still take any of its items (capacity left, none of its answers seen). Each of those
    can give any one open judgment, a different one each, so at 0 or more all the
    judgments left once this one is given can still be given, whatever is taken now
    (`stranded_by_taking` is 0 for every item). Below 0 only the full matching can tell:
    with about the annotators a study needs, late in a character's work, or where
    earlier choices left some able to take only a few."""
    return free_others - (open_judgments - 1)


@dataclass(frozen=True)
class ItemGroup:
    """One group of mutually exclusive items as the look-ahead needs it: their open
    judgments, the answers each shows, and the annotators who could still take them."""

    open_slots: Mapping[int, int]
    exposures: Mapping[int, Collection[int]]
    me: Taker
    others: Sequence[Taker] = ()


def stranding_costs(candidates: Sequence[int], groups: Mapping[int, ItemGroup]) -> dict[int, int]:
    """Per candidate: how many judgments taking it would strand (`stranded_by_taking`).
    `groups` maps a candidate to its group; a candidate without one (a diversity set, a
    gold item) strands nothing. For an annotator who may take one item of a group (the
    reference design), one matching per group answers for all its candidates."""
    cost: dict[int, int] = {}
    safe_by_group: dict[int, set[int] | None] = {}
    for item in candidates:
        group = groups.get(item)
        if group is None or group.open_slots.get(item, 0) <= 0:
            cost[item] = 0
        elif group.me.capacity == 1:
            if id(group) not in safe_by_group:
                safe_by_group[id(group)] = _items_taken_without_stranding(group)
            safe = safe_by_group[id(group)]
            cost[item] = 0 if safe is None or item in safe else 1
        else:
            cost[item] = stranded_by_taking(
                item,
                open_slots=group.open_slots,
                exposures=group.exposures,
                me=group.me,
                others=group.others,
            )
    return cost


def least_stranding_first(candidates: Sequence[int], groups: Mapping[int, ItemGroup]) -> list[int]:
    """The candidates, those whose taking strands the fewest judgments first, in their
    given order otherwise (the order of the rest of the policy)."""
    cost = stranding_costs(candidates, groups)
    return sorted(candidates, key=lambda item: cost[item])


def annotators_needed(
    *,
    design: str,
    n_compared: int,
    n_rounds: int,
    overlap: int,
    sets_by_scenario: Iterable[tuple[int, int]] = (),
    n_sets: int = 0,
) -> int:
    """The fewest approved annotators per character for every item to reach `overlap`
    judgments under the never-the-same-answer-twice rule.

    Every scenario must find enough annotators on its own. Diversity sets make some
    scenarios harder: whoever rates a source's set has seen that source's answers in the
    set's scenarios and can take fewer (under the reference design, for the reference
    source's set, none) of their pairs. `sets_by_scenario` gives, per scenario of the
    character, how many sets (of the reference source, of compared sources) hold one of
    its answers. An annotator rates at most one set per character (see
    services.leases), so the character's `n_sets` sets need `overlap` distinct
    annotators each.
    """
    n_sources = n_compared + 1
    pairs_per_cell = n_compared if design == REFERENCE else n_sources * (n_sources - 1) // 2
    slots_per_scenario = pairs_per_cell * n_rounds * overlap
    per_annotator = items_one_annotator_can_take_per_scenario(design, n_sources)
    reference_loss = _slots_lost_per_scenario(design, n_sources, reference=True)
    compared_loss = _slots_lost_per_scenario(design, n_sources, reference=False)
    needed = max(math.ceil(slots_per_scenario / per_annotator), n_sets * overlap)
    for reference_sets, compared_sets in sets_by_scenario:
        lost = overlap * (reference_sets * reference_loss + compared_sets * compared_loss)
        needed = max(needed, math.ceil((slots_per_scenario + lost) / per_annotator))
    return needed


def _slots_lost_per_scenario(design: str, n_sources: int, *, reference: bool) -> int:
    """How many fewer items of one scenario an annotator can take once they have seen one
    source's round-1 answer there (the reference source's, or a compared one's)."""
    full = items_one_annotator_can_take_per_scenario(design, n_sources)
    if design == REFERENCE:
        # Every pair shows the reference answer; without one compared source, the pairs
        # with the others remain.
        without = 0 if reference or n_sources < 3 else 1
    else:
        without = (n_sources - 1) // 2
    return full - without


# Balanced blocks of four for the side schedule: each puts the first slot on the left twice.
# Only these four of the six arrangements are used: their one or two changes of side
# inside the block, plus a fair change at the block boundary, make consecutive items
# change side half the time; the alternating LRLR/RLRL would make it 62.5 %.
SIDE_BLOCKS = ((0, 0, 1, 1), (1, 1, 0, 0), (0, 1, 1, 0), (1, 0, 0, 1))


def side_slack(n_sources: int) -> int:
    """How far from even the schedule may take a source before the lagging-source rule
    takes over: log2 of the number of sources, so that no source ends more than
    log2(sources) + 1 from even. With one less (the lagging rule's own bound), a study
    of four sources lets each compared source drift only one step, the rule overrides
    the schedule on a third of the pairs, and its corrections alternate: sides then
    change between consecutive pairs 69 % of the time instead of half.
    """
    return max(1, math.ceil(math.log2(max(2, n_sources))))


def scheduled_left_slot(seed: str, position: int, recent: Sequence[int] = ()) -> int:
    """Which slot (0 or 1) this annotator's schedule puts on the left for their
    `position`-th pair (counting from 0).

    The schedule is a seeded random sequence of balanced blocks: every block of four
    puts each slot on the left twice, so the first slot's left-right difference never
    exceeds 2; at every position either slot is equally likely; and the side changes
    between consecutive items half the time, so the next side cannot be guessed from
    the last. `seed` must be secret per annotator and study (an HMAC), or an annotator
    who knew it could predict the sides.

    `recent` holds the slots actually put on the left for the last two pairs (oldest
    first). When the lagging-source rule overrode the schedule on the last pair and
    that override changed the side, this pair keeps the side instead: overrides happen
    when a source has drifted, mostly right after a run on one side, so they change the
    side more often than chance; answering each such change with one repeat keeps the
    rate of changes near one half (`bench/side_flips.py`).
    """
    if len(recent) == 2 and position > 0:
        before, last = recent
        if last != before and last != _block_slot(seed, position - 1):
            return last
    return _block_slot(seed, position)


def _block_slot(seed: str, position: int) -> int:
    block = position // 4
    digest = hashlib.blake2b(f"{seed}:{block}".encode(), digest_size=8).digest()
    return SIDE_BLOCKS[int.from_bytes(digest) % len(SIDE_BLOCKS)][position % 4]


def left_first(
    slot_sources: Sequence[int],
    imbalance: Mapping[int, int],
    coin: float,
    *,
    scheduled: int | None = None,
    slack: int | None = None,
) -> list[int]:
    """Display order (slot indices) for a pair that evens out left and right.

    `imbalance[s]` is how many more times source `s` has been on the left than on the
    right for this annotator. `scheduled` (from `scheduled_left_slot`) is the slot the
    annotator's schedule puts on the left; it is followed while neither source's
    imbalance would go beyond `slack` (by default `side_slack` of the number of sources
    the annotator has seen). Otherwise, or without a schedule, the source that
    has been on the left less often goes left; on a tie, `coin` (uniform in [0, 1))
    decides. Always taking the lagging source is balanced but predictable: it makes
    consecutive items change side about two times in three.
    """
    first, second = slot_sources
    a, b = imbalance.get(first, 0), imbalance.get(second, 0)
    if scheduled is not None:
        if slack is None:
            slack = side_slack(len({first, second, *imbalance}))
        left, right = (a, b) if scheduled == 0 else (b, a)
        if left + 1 <= slack and right - 1 >= -slack:
            return [0, 1] if scheduled == 0 else [1, 0]
    if a < b or (a == b and coin < 0.5):
        return [0, 1]
    return [1, 0]
