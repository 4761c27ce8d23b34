"""What the look-ahead of the next item costs in Python at the published study's scale.

One scenario of the published design (10 LLMs against the human source, both rounds,
overlap 3): 20 pairs, 60 judgments, 60 annotators needed. Near the end of a character's
work an annotator's up to 100 candidates fall in a few scenarios; each candidate's cost
is one maximum matching of the scenario's open judgments before and after taking it.
Prints the median milliseconds of `pairing.stranding_costs` over several runs.

    .venv/bin/python bench/lookahead_cost.py
"""

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from annotation.pairing import ItemGroup, Taker, stranding_costs
from bench import report

REFERENCE_ANSWER = 0


def scenario(rng: random.Random, first_item: int, annotators: int, taken: int) -> ItemGroup:
    """A scenario where `taken` of the 60 judgments are given; a fifth of those still to
    rate it saw one compared source's answers in a diversity set."""
    items = list(range(first_item, first_item + 20))
    exposures = {item: frozenset({REFERENCE_ANSWER, 1000 + item % 10}) for item in items}
    open_slots = dict.fromkeys(items, 3)
    for _ in range(taken):
        item = rng.choice([i for i in items if open_slots[i] > 0])
        open_slots[item] -= 1
    waiting = annotators - taken
    others = [
        Taker(capacity=1, seen=frozenset({1000 + rng.randrange(10)}))
        if rng.random() < 0.2
        else Taker(capacity=1)
        for _ in range(waiting - 1)
    ]
    return ItemGroup(open_slots=open_slots, exposures=exposures, me=Taker(1), others=others)


def main():
    rng = random.Random(0)
    for annotators, label in ((60, "exactly the 60 needed"), (90, "1.5 times the need")):
        for taken in (0, 30, 55):
            groups, candidates = {}, []
            for n in range(5):  # 100 candidates over five scenarios
                group = scenario(rng, 100 * n, annotators, taken)
                open_items = [i for i, slots in group.open_slots.items() if slots > 0]
                for item in open_items[:20]:
                    groups[item] = group
                    candidates.append(item)
            runs = []
            for _ in range(7):
                start = time.perf_counter()
                stranding_costs(candidates, groups)
                runs.append((time.perf_counter() - start) * 1000)
            median = statistics.median(runs)
            print(
                f"{label:22} {taken:>2} of 60 judgments given: {len(candidates):>3} candidates "
                f"in {median:6.1f} ms (median of {len(runs)})"
            )
            report("look-ahead cost", f"{label}, {taken} of 60 given", f"{median:.1f} ms")


if __name__ == "__main__":
    main()
