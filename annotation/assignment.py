"""Assignment rules that need no database: which sources meet in a pair, how many
annotators a design needs, and which answer goes on the left.

Kept pure so that they can be reasoned about and property-tested on their own.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
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


def left_first(slot_sources: Sequence[int], imbalance: Mapping[int, int], coin: float) -> list[int]:
    """Display order (slot indices) for a pair that evens out left and right.

    `imbalance[s]` is how many more times source `s` has been on the left than on the
    right for this annotator. The source that has been on the left less often goes left;
    on a tie, `coin` (uniform in [0, 1)) decides.
    """
    first, second = slot_sources
    a, b = imbalance.get(first, 0), imbalance.get(second, 0)
    if a < b or (a == b and coin < 0.5):
        return [0, 1]
    return [1, 0]
