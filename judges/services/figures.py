"""A judge run's report beside the humans, recomputed and stored for the pages."""

from django.utils import timezone

from ..models import JudgeRun
from ..selectors import judge_report, runs_of_study


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
