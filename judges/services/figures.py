"""A judge run's report beside the humans, recomputed and stored for the pages."""

import logging

from django.db.models import F, Max, OuterRef, Q, Subquery
from django.utils import timezone

from annotation.models import JudgmentDecision

from ..models import JudgeRun
from ..selectors import judge_report, runs_of_study

logger = logging.getLogger(__name__)


def run_figures_refresh(*, run: JudgeRun) -> dict:
    """Recompute the run's report from the database now and store it; returns it."""
    report = judge_report(run)
    computed_at = timezone.now()
    JudgeRun.objects.filter(pk=run.pk).update(figures=report, figures_computed_at=computed_at)
    run.figures, run.figures_computed_at = report, computed_at
    return report


def study_judges_refresh(study) -> list[dict] | None:
    """Every judge run of the study, its figures recomputed and stored; None without runs."""
    runs = runs_of_study(study)
    return [run_figures_refresh(run=run) for run in runs] if runs else None


def runs_figures_catch_up() -> list[int]:
    """Recompute the figures of every judge run whose study has had a human judgment, or
    a staff decision to exclude one or take it back, since they were computed (the beat's
    job, every ten minutes); returns the runs."""
    latest_decision = (
        JudgmentDecision.objects.filter(judgment__item__study=OuterRef("study"))
        .order_by("-decided_at")
        .values("decided_at")[:1]
    )
    stale = (
        JudgeRun.objects.filter(figures_computed_at__isnull=False)
        .annotate(
            last_judgment=Max("study__judgments__submitted_at"),
            last_decision=Subquery(latest_decision),
        )
        .filter(
            Q(last_judgment__gt=F("figures_computed_at"))
            | Q(last_decision__gt=F("figures_computed_at"))
        )
    )
    refreshed = []
    for run in stale.select_related("study", "self_source"):
        run_figures_refresh(run=run)
        refreshed.append(run.pk)
    if refreshed:
        logger.info("recomputed the figures of judge run(s) %s", refreshed)
    return refreshed
