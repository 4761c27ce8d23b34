"""How often consecutive pairs change side, and how balanced sides stay, per annotator.

Simulates annotators rating a reference design (compared sources drawn at random, each
paired with the reference answer) under three side rules: the lagging source alone; the
balanced-block schedule as it was (overridden once a source is log2(sources) - 1 from
even, no answer to overrides); and the rule now (slack log2(sources), one repeat after
an override that changed the side). Two designs: the demo's four sources and ChatAnime's
eleven, at a demo annotator's 24 pairs and at 120. Prints the flip rate with its 99 %
interval, the worst left-right difference of any source, and the largest deviation
from 50 % left at any position.

    .venv/bin/python bench/side_flips.py [ANNOTATORS]
"""

import itertools
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.pairing import left_first, scheduled_left_slot

RULES = ("lagging source only", "schedule, before", "schedule, now")


def simulate(*, rule, annotators, items, compared):
    sequences, worst = [], 0
    n_sources = compared + 1
    for annotator in range(annotators):
        draw = random.Random(annotator)
        seed = f"annotator-{annotator}"
        imbalance, sides = {}, []
        for position in range(items):
            pair = (0, draw.randint(1, compared))
            coin = draw.random()
            if rule == RULES[0]:
                order = left_first(pair, imbalance, coin)
            elif rule == RULES[1]:
                slack = max(1, math.ceil(math.log2(n_sources)) - 1)
                schedule = scheduled_left_slot(seed, position)
                order = left_first(pair, imbalance, coin, scheduled=schedule, slack=slack)
            else:
                schedule = scheduled_left_slot(seed, position, sides[-2:])
                order = left_first(pair, imbalance, coin, scheduled=schedule)
            left, right = pair[order[0]], pair[order[1]]
            imbalance[left] = imbalance.get(left, 0) + 1
            imbalance[right] = imbalance.get(right, 0) - 1
            sides.append(order[0])
        sequences.append(sides)
        worst = max(worst, *(abs(value) for value in imbalance.values()))
    return sequences, worst


def main():
    annotators = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for compared, items in ((3, 24), (3, 120), (10, 24), (10, 120)):
        print(f"{compared + 1} sources, {items} pairs per annotator, {annotators} annotators")
        for rule in RULES:
            sequences, worst = simulate(
                rule=rule, annotators=annotators, items=items, compared=compared
            )
            flips = sum(a != b for sides in sequences for a, b in itertools.pairwise(sides))
            transitions = sum(len(sides) - 1 for sides in sequences)
            rate = flips / transitions
            half = 2.576 * math.sqrt(rate * (1 - rate) / transitions)
            by_position = max(
                abs(sum(sides[p] == 0 for sides in sequences) / annotators - 0.5)
                for p in range(items)
            )
            print(
                f"  {rule:20} flip rate {rate:.3f} (99% CI {rate - half:.3f}-{rate + half:.3f}); "
                f"worst |left-right| {worst}; worst position off 50% by {by_position:.3f}"
            )


if __name__ == "__main__":
    main()
