"""Study dashboards: progress, caps, status, and the review of flagged judgments."""

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from common.forms import attempt, submit
from common.roles import study_manager_required
from common.sections import sections_of
from common.typing import AuthenticatedRequest

from ... import selectors, services
from ...models import FlagKind, Judgment, Study, StudyStatus
from .forms import FlaggedDecisionForm, JudgmentDecisionForm, StudyCapsForm, StudyStatusForm


@study_manager_required
@require_GET
def study_list(request: AuthenticatedRequest) -> HttpResponse:
    return render(request, "staff/studies.html", {"studies": selectors.staff_studies()})


def _dashboard_context(study: Study) -> dict[str, Any]:
    progress = selectors.study_progress(study)
    total = progress["total"]
    return {
        "study": study,
        "progress": progress,
        "throughput": selectors.study_throughput(study),
        "eta": selectors.study_eta(study, total.needed - total.judgments),
        "open_leases": selectors.open_leases(study),
        "flagged": selectors.flagged_judgments(study),
        "flagged_count": selectors.flagged_count(study),
        "flagged_kinds": selectors.flagged_kinds(study),
        "flagged_annotators": selectors.flagged_annotators(study),
        "statuses": StudyStatus.choices,
    }


@study_manager_required
@require_GET
def study_dashboard(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    context = _dashboard_context(study) | {"sections": sections_of("staff-study", request)}
    return render(request, "staff/study.html", context)


@study_manager_required
@require_POST
def study_caps(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    return submit(
        request,
        StudyCapsForm(request.POST),
        lambda caps: services.study_caps_set(study=study, actor=request.user, caps=caps),
        success=_("The caps are saved."),
        then=reverse("staff-study", args=[study.slug]),
    )


@study_manager_required
@require_POST
def study_status(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    return submit(
        request,
        StudyStatusForm(request.POST),
        lambda data: services.study_set_status(
            study=study, status=data["status"], actor=request.user
        ),
        # Made after the change, so that it names the new status.
        success=lambda _study: (
            _("The study is now: %(status)s") % {"status": study.get_status_display()}
        ),
        then=reverse("staff-study", args=[study.slug]),
    )


@study_manager_required
@require_POST
def judgment_decide(request: AuthenticatedRequest, slug: str, judgment_id: int) -> HttpResponse:
    """Keep or exclude a flagged judgment; the reason is required."""
    study = get_object_or_404(Study, slug=slug)
    judgment = get_object_or_404(Judgment, pk=judgment_id, item__study=study)
    form = JudgmentDecisionForm(request.POST)
    if not request.htmx:
        return submit(
            request,
            form,
            lambda data: _decide(request, judgment, data),
            success=_("Judgment %(pk)d: decision recorded.") % {"pk": judgment.pk},
            then=reverse("staff-study", args=[study.slug]) + "#flagged",
        )
    error, _decided = attempt(form, lambda data: _decide(request, judgment, data))
    # Only the list of flagged judgments is swapped in; the rest of the page stays.
    context = {
        "study": study,
        "flagged": selectors.flagged_judgments(study),
        "flagged_count": selectors.flagged_count(study),
        "decision_error": error,
        "error_judgment": judgment.pk if error else None,
    }
    return render(request, "staff/study.html#flagged", context, status=422 if error else 200)


def _decide(request: AuthenticatedRequest, judgment: Judgment, data: dict[str, Any]) -> Judgment:
    return services.judgment_decide(
        judgment=judgment,
        decided_by=request.user,
        reason=data["reason"],
        excluded=data["decision"] == "exclude",
    )


@study_manager_required
@require_POST
def flagged_decide(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """Keep or exclude every judgment with an open flag of one kind; the reason is
    required."""
    study = get_object_or_404(Study, slug=slug)
    labels = dict(FlagKind.choices)

    def decide(data: dict[str, Any]) -> int:
        return services.flagged_judgments_decide(
            study=study,
            kind=data["kind"],
            decided_by=request.user,
            reason=data["reason"],
            excluded=data["decision"] == "exclude",
        )

    return submit(
        request,
        FlaggedDecisionForm(request.POST),
        decide,
        success=lambda decided: (
            ngettext(
                "%(n)d judgment flagged “%(kind)s”: decision recorded.",
                "%(n)d judgments flagged “%(kind)s”: decision recorded.",
                decided,
            )
            % {"n": decided, "kind": labels.get(request.POST.get("kind", ""), "")}
        ),
        then=reverse("staff-study", args=[study.slug]) + "#flagged",
    )
