"""What reading items' blocks costs (`selectors.annotating.item_blocks_load`: the answers an
item shows with their slots, its row, character and scenario): one item, as a lease
planned with the look-ahead reads its own, and twenty, as every plan reads its
candidates'. Medians over 3 passes of 400 items of the published study, wall time and
the process's own CPU (PostgreSQL's is the difference, and the round trip).

Runs on the synthetic study `bench/aggregate_scale.py --keep` leaves (the published
answers, 24,000 pairs); reads only.

    .venv/bin/python bench/aggregate_scale.py --runs 1 --keep
    .venv/bin/python bench/item_blocks.py

To compare two commits, run the script of each checkout against the same database.
"""

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.aggregate_scale import use_scale_database  # noqa: E402


def main():
    use_scale_database()
    from annotation.models import Item, ItemKind
    from annotation.selectors.annotating import item_blocks_load

    pairs = Item.objects.filter(kind=ItemKind.PAIR).order_by("pk")
    # Spread over the study, rounds 1 and 2 alike. `item_blocks_load` always reads: the
    # process's copies are what `item_blocks` consults before calling it.
    ids = list(pairs.values_list("pk", flat=True)[:2800:7])
    figures = []
    for size in (1, 20):
        wall, cpu = [], []
        for _ in range(3):
            for start in range(0, len(ids), size):
                started, started_cpu = time.perf_counter(), time.process_time()
                item_blocks_load(ids[start : start + size])
                wall.append(time.perf_counter() - started)
                cpu.append(time.process_time() - started_cpu)
        figures.append(
            f"{size} item(s): {statistics.median(wall) * 1000:.2f} ms,"
            f" of which this process's CPU {statistics.median(cpu) * 1000:.2f} ms"
        )
    print("item blocks read, median: " + "; ".join(figures))


if __name__ == "__main__":
    main()
