"""What the look-ahead costs near the end of a study of the published size, in-process,
median milliseconds of `--runs`:

- one weighing (`lookahead.stranding_costs_of`, ten candidates: its reads and matching)
  with the study capped per annotator, and ten pairs of one scenario given room for one
  more judgment each. "cold": the process's copies of the study's staffing are dropped
  before each weighing (the first request of a minute); "warm": they are kept, as for
  every other request;
- the next item (`services.assignment_next`, each lease rolled back) near the end of one
  character's work: a fifth of its 1,200 pairs want one more judgment, all 180
  annotators may rate it; each plans with the look-ahead.

Runs on the synthetic study `bench/aggregate_scale.py --keep` leaves (24,000 pairs, 72,000
judgments from 180 annotators), inside transactions that are rolled back.

    .venv/bin/python bench/aggregate_scale.py --runs 1 --keep
    .venv/bin/python bench/lookahead_reads.py [--runs 15]

To compare two commits, run the script of each checkout against the same database.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.aggregate_scale import use_scale_database  # noqa: E402

CAP = 1000  # above anyone's count here: the cap is read, and nobody is left out by it


def weighings(runs: int, *, cold: bool) -> float:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Item, ItemKind, Study
    from annotation.selectors import lookahead, staffing

    study = Study.objects.get(name="Scale")
    first = Item.objects.filter(study=study, kind=ItemKind.PAIR).order_by("pk").first()
    group = Item.objects.filter(
        study=study,
        kind=ItemKind.PAIR,
        character_id=first.character_id,
        scenario_id=first.scenario_id,
    ).order_by("pk")
    candidates = list(group.values_list("pk", flat=True)[:10])
    Item.objects.filter(pk__in=candidates).update(judgment_count=study.overlap - 1)
    annotator = get_user_model().objects.filter(email__startswith="synthetic").first()
    samples = []
    for _ in range(runs + 1):  # the first warms the process up
        if cold:
            staffing.staffing_forget()
        started = time.perf_counter()
        lookahead.stranding_costs_of(annotator, study, candidates, timezone.now())
        samples.append(time.perf_counter() - started)
    return statistics.median(samples[1:]) * 1000


def next_items(runs: int) -> tuple[float, float]:
    """Median milliseconds and queries of the next item, each lease rolled back."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from annotation import services
    from annotation.models import Item, ItemKind, Qualification, Study
    from annotation.selectors import staffing
    from dialogues.models import Character

    study = Study.objects.get(name="Scale")
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    character = Character.objects.order_by("pk").first()
    pairs = Item.objects.filter(study=study, kind=ItemKind.PAIR, character=character)
    Item.objects.filter(pk__in=list(pairs.order_by("pk").values_list("pk", flat=True)[::5])).update(
        judgment_count=study.overlap - 1
    )
    services.character_progress_recount(study=study)
    annotators = list(get_user_model().objects.filter(email__startswith="synthetic").order_by("pk"))
    for annotator in annotators:
        Qualification.objects.update_or_create(
            profile=annotator.annotator_profile,
            character=character,
            defaults={"status": "approved"},
        )
    study = Study.objects.get(pk=study.pk)
    # Who may rate is kept for a minute: the weighings above read it before these
    # annotators were approved.
    staffing.staffing_forget()
    samples, queries = [], []
    for annotator in annotators[: runs + 1]:  # the first warms the process up
        rollback = transaction.savepoint()
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            assert services.assignment_next(user=annotator, study=study) is not None
            samples.append(time.perf_counter() - started)
        queries.append(len(captured))
        transaction.savepoint_rollback(rollback)
    return statistics.median(samples[1:]) * 1000, statistics.median(queries[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    use_scale_database()
    from django.db import transaction

    from annotation.models import Judgment, Study

    with transaction.atomic():
        Study.objects.filter(name="Scale").update(cap_per_annotator=CAP)
        judgments = Judgment.objects.count()
        cold = weighings(args.runs, cold=True)
        warm = weighings(args.runs, cold=False)
        transaction.set_rollback(True)
    with transaction.atomic():
        next_item, queries = next_items(args.runs)
        transaction.set_rollback(True)
    print(
        f"look-ahead weighing of 10 candidates, study capped at {CAP}, {judgments:,} judgments:"
        f" cold {cold:.1f} ms, warm {warm:.1f} ms (median of {args.runs})"
    )
    print(
        f"next item near the end of a character's work, 180 annotators: {next_item:.1f} ms,"
        f" {queries:g} queries (median of {args.runs})"
    )


if __name__ == "__main__":
    main()
