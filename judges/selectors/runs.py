"""Which of a study's items a judge run rates, in which order and on which sides, and how
far it has got."""

import hashlib
from dataclasses import dataclass

from django.db.models import Count, Q, Sum

from annotation.models import Item, ItemKind, Metric
from annotation.pairing import scheduled_left_slot
from annotation.selectors import metrics_for

from ..models import FIRST_ORDER, SWAPPED_ORDER, JudgeCallStatus, JudgeRun


def metrics_of_pairs() -> list[Metric]:
    """The metrics annotators rate on a pair, in the order the rating form shows them:
    the rating page's own read, which each process keeps for a minute (every judge call
    needs them three times)."""
    return metrics_for(diversity=False)


def _spread(study_slug: str, item_id: int) -> bytes:
    return hashlib.blake2b(f"{study_slug}:{item_id}".encode(), digest_size=8).digest()


def run_items(run: JudgeRun) -> list[int]:
    """The run's pair items (gold items aside: their answers are planted), in an order
    that mixes characters, scenarios and sources and never changes, so `--items N`
    always means the same N items and a larger N adds to them."""
    items = Item.objects.filter(study=run.study_id, kind=ItemKind.PAIR, is_gold=False)
    ordered = sorted(items.values_list("pk", flat=True), key=lambda pk: _spread(run.study.slug, pk))
    if run.items_requested is not None:
        ordered = ordered[: run.items_requested]
    return ordered


@dataclass(frozen=True)
class PlannedCall:
    item_id: int
    order: int
    left_slot: int  # 0: the reference answer on the left


def left_slot_of(run: JudgeRun, position: int, order: int) -> int:
    """The annotators' side schedule (balanced blocks of four, `pairing.scheduled_left_slot`)
    as if the judge were one more annotator; the swapped order shows the other side."""
    first = scheduled_left_slot(f"judge-run:{run.pk}", position)
    return first if order == FIRST_ORDER else 1 - first


def run_missing_calls(run: JudgeRun) -> list[PlannedCall]:
    """Every (item, order) of the run without a verdict yet: never judged, or failed."""
    orders = (FIRST_ORDER, SWAPPED_ORDER) if run.both_orders else (FIRST_ORDER,)
    rated = set(run.calls.filter(status=JudgeCallStatus.OK).values_list("item_id", "order"))
    return [
        PlannedCall(item_id, order, left_slot_of(run, position, order))
        for position, item_id in enumerate(run_items(run))
        for order in orders
        if (item_id, order) not in rated
    ]


@dataclass(frozen=True)
class JudgeProgress:
    requested: int
    rated: int
    failed: int
    tokens_in: int
    tokens_out: int
    failures: list[str]

    @property
    def missing(self) -> int:
        return self.requested - self.rated


def run_progress(run: JudgeRun) -> JudgeProgress:
    orders = 2 if run.both_orders else 1
    figures = run.calls.aggregate(
        rated=Count("pk", filter=Q(status=JudgeCallStatus.OK)),
        failed=Count("pk", filter=Q(status=JudgeCallStatus.FAILED)),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
    )
    failures = list(
        run.calls.filter(status=JudgeCallStatus.FAILED)
        .order_by("-updated_at")
        .values_list("error", flat=True)[:3]
    )
    return JudgeProgress(
        requested=len(run_items(run)) * orders,
        rated=figures["rated"],
        failed=figures["failed"],
        tokens_in=figures["tokens_in"] or 0,
        tokens_out=figures["tokens_out"] or 0,
        failures=failures,
    )


def runs_of_study(study) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(study=study)
        .select_related("endpoint", "self_source")
        .order_by("created_at", "pk")
    )


def runs_overview() -> list[tuple[JudgeRun, JudgeProgress]]:
    """Every judge run, newest first, with its progress (the staff page)."""
    runs = JudgeRun.objects.select_related("study", "endpoint").order_by("-created_at", "-pk")
    return [(run, run_progress(run)) for run in runs]


def run_complete(run: JudgeRun) -> bool:
    """Whether every wanted verdict is there, by counting: each worker's call asks."""
    pairs = Item.objects.filter(study=run.study_id, kind=ItemKind.PAIR, is_gold=False).count()
    wanted = min(pairs, run.items_requested or pairs) * (2 if run.both_orders else 1)
    return run.calls.filter(status=JudgeCallStatus.OK).count() >= wanted
