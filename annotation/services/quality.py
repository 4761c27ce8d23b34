"""Quality control: gold checks, automatic flags, pausing, and staff exclusions.

Flags and checks never change or delete ratings. Only a staff decision excludes a
judgment from results, and every such decision is recorded with who and why.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from common.text import plain_text

from .. import sql
from ..models import (
    AuditAction,
    FlagKind,
    GoldCheck,
    Judgment,
    JudgmentDecision,
    QualityFlag,
    Study,
)
from ..results.loading import load_ratings
from ..stats.annotators import deviations_of
from .annotators import annotator_pause_automatically
from .refreshes import study_results_refresh_later


def gold_failures(expectations, ratings: dict[tuple[int | None, int], int]) -> list[dict]:
    """Pure: which expectations a judgment's ratings miss.

    `expectations`: iterable of (answer_id or None, metric_id or None, minimum, maximum);
    `ratings`: {(answer_id, metric_id): value}. A None answer or metric matches all.
    """
    failures = []
    for answer_id, metric_id, minimum, maximum in expectations:
        for (rated_answer, rated_metric), value in ratings.items():
            if answer_id not in (None, rated_answer) or metric_id not in (None, rated_metric):
                continue
            if not minimum <= value <= maximum:
                failures.append(
                    {
                        "answer": rated_answer,
                        "metric": rated_metric,
                        "value": value,
                        "minimum": minimum,
                        "maximum": maximum,
                    }
                )
    return failures


def is_straight_lined(values: list[int]) -> bool:
    """The same value on every metric of every answer of a pair (more than a few values)."""
    return len(values) > 2 and len(set(values)) == 1


def judgment_checks(*, judgment: Judgment, ratings: dict | None = None) -> list[QualityFlag]:
    """Per-judgment checks, run in the submission's transaction. `ratings`, keyed by
    (answer_id, metric_id), spares reading back what the submission just wrote."""
    item, study = judgment.item, judgment.item.study
    if ratings is None:
        ratings = {(r.answer_id, r.metric_id): r.value for r in judgment.ratings.all()}
    flags = []
    if item.is_gold:
        expectations = item.gold_expectations.values_list(
            "answer_id", "metric_id", "minimum", "maximum"
        )
        failures = gold_failures(expectations, ratings)
        GoldCheck.objects.create(judgment=judgment, passed=not failures, failures=failures)
        if failures:
            flags.append(_flag(judgment, FlagKind.FAILED_CHECK, {"ratings": len(failures)}))
    flags += judgment_flags(judgment, ratings)
    if flags:
        # One written insert for all of them (see `annotation.sql`).
        sql.insert(*flags)
        pause_if_flagged(annotator=judgment.annotator, study=study)
    return flags


def judgment_flags(judgment: Judgment, ratings: dict) -> list[QualityFlag]:
    """The flags a judgment raises by itself, unsaved: straight-lining and too little
    time on the item. Worked out before the judgment is written, so that a submission can
    write them in the same statement (`judgments._record_in_one_statement`)."""
    item, study = judgment.item, judgment.item.study
    flags = []
    if (
        study.flag_straight_lining
        and item.kind == "pair"
        and is_straight_lined(list(ratings.values()))
    ):
        flags.append(
            _flag(judgment, FlagKind.STRAIGHT_LINING, {"value": next(iter(ratings.values()))})
        )
    if judgment.seconds_on_task < study.min_seconds_per_item:
        flags.append(
            _flag(
                judgment,
                FlagKind.TOO_FAST,
                {"seconds": judgment.seconds_on_task, "minimum": study.min_seconds_per_item},
            )
        )
    return flags


def _flag(judgment: Judgment, kind: str, figures: dict) -> QualityFlag:
    return QualityFlag(
        annotator=judgment.annotator,
        study=judgment.item.study,
        judgment=judgment,
        kind=kind,
        figures=figures,
    )


def pause_if_flagged(*, annotator, study: Study) -> bool:
    """Pause the annotator for staff review once their open flags reach the threshold
    (never a members-only annotator mid-batch: see `annotator_pause_automatically`)."""
    if not study.pause_after_flags:
        return False
    open_flags = QualityFlag.objects.filter(
        annotator=annotator, study=study, resolved_at__isnull=True
    ).count()
    if open_flags < study.pause_after_flags:
        return False
    return annotator_pause_automatically(annotator=annotator, study=study, open_flags=open_flags)


def low_agreement_flags(*, study: Study, data=None, deviations=None) -> list[QualityFlag]:
    """Flag annotators whose ratings sit far from the other annotators' on shared items.
    Idempotent: an annotator keeps at most one open low-agreement flag per study.
    `deviations` (from `deviations_of`) saves computing them again."""
    if deviations is None:
        deviations = deviations_of(data if data is not None else load_ratings(study))
    created = []
    for annotator_id, (distance, units) in deviations.items():
        if units < study.low_agreement_min_units or distance <= study.low_agreement_threshold:
            continue
        flag, new = QualityFlag.objects.get_or_create(
            annotator_id=annotator_id,
            study=study,
            kind=FlagKind.LOW_AGREEMENT,
            judgment=None,
            resolved_at=None,
            defaults={"figures": {"distance": round(distance, 4), "ratings": units}},
        )
        if new:
            created.append(flag)
            pause_if_flagged(annotator=flag.annotator, study=study)
    return created


@transaction.atomic
def judgment_exclude(
    *, judgment: Judgment, decided_by, reason: str, excluded: bool = True
) -> Judgment:
    """Staff decide whether a judgment counts in the results; the decision is recorded
    (as a JudgmentDecision and in the audit trail) and results are recomputed."""
    from . import audit
    from .errors import AnnotationError

    reason = plain_text(reason)
    if not reason:
        raise AnnotationError("reason", _("Please give a reason."))
    locked = Judgment.objects.select_for_update().select_related("item__study").get(pk=judgment.pk)
    before = locked.excluded
    Judgment.objects.filter(pk=judgment.pk).update(excluded=excluded)
    judgment.excluded = excluded
    JudgmentDecision.objects.create(
        judgment=judgment, excluded=excluded, reason=reason, decided_by=decided_by
    )
    audit.record(
        actor=decided_by,
        action=AuditAction.JUDGMENT_EXCLUDE if excluded else AuditAction.JUDGMENT_INCLUDE,
        target=locked,
        target_label=f"judgment {locked.pk} (item {locked.item_id})",
        study=locked.item.study,
        before={"excluded": before},
        after={"excluded": excluded},
        note=reason,
    )
    # Results leave the judgment out (or take it back) at the next, debounced recompute.
    study_results_refresh_later(study_id=locked.item.study_id)
    return judgment


def judgment_decide(*, judgment: Judgment, decided_by, reason: str, excluded: bool) -> Judgment:
    """A flagged judgment reviewed: excluded or kept, and its open flags resolved, in one
    transaction."""
    with transaction.atomic():
        judgment_exclude(judgment=judgment, decided_by=decided_by, reason=reason, excluded=excluded)
        for flag in judgment.flags.filter(resolved_at__isnull=True):
            flag_resolve(flag=flag, resolved_by=decided_by, note=reason)
    return judgment


def flagged_judgments_decide(
    *, study: Study, kind: str, decided_by, reason: str, excluded: bool
) -> int:
    """Every judgment of the study with an open flag of this kind, kept or excluded at
    once with one reason, each as `judgment_decide` would (its decision, its flags
    resolved, the audit trail): hundreds of "implausibly fast" flags need not be decided
    one by one. All or nothing; how many judgments were decided."""
    from .errors import AnnotationError

    if kind not in FlagKind.values:
        raise AnnotationError("flag_kind", _("Choose a kind of flag."))
    if not plain_text(reason):
        raise AnnotationError("reason", _("Please give a reason."))
    with transaction.atomic():
        ids = sorted(
            set(
                QualityFlag.objects.filter(
                    study=study, kind=kind, resolved_at__isnull=True, judgment__isnull=False
                ).values_list("judgment_id", flat=True)
            )
        )
        for judgment in Judgment.objects.filter(pk__in=ids).order_by("pk"):
            judgment_decide(
                judgment=judgment, decided_by=decided_by, reason=reason, excluded=excluded
            )
    return len(ids)


@transaction.atomic
def flag_resolve(*, flag: QualityFlag, resolved_by, note: str = "") -> QualityFlag:
    from . import audit

    flag.resolved_by = resolved_by
    flag.resolved_at = timezone.now()
    flag.save(update_fields=["resolved_by", "resolved_at"])
    audit.record(
        actor=resolved_by,
        action=AuditAction.FLAG_RESOLVE,
        target=flag,
        target_label=f"{flag.kind} / judgment {flag.judgment_id or '-'}",
        study=flag.study,
        before={"resolved": False},
        after={"resolved": True},
        note=plain_text(note),
    )
    return flag
