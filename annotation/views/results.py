"""Results for researchers and staff: leaderboards, agreement, preferences, charts."""

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from common.roles import researcher_required, study_manager_required
from common.sections import sections_of
from common.typing import AuthenticatedRequest

from .. import methods, selectors, services
from ..models import Study, StudyResults
from .exports import export_context


@researcher_required
@require_GET
def study_list(request: AuthenticatedRequest) -> HttpResponse:
    return render(
        request, "annotation/results_list.html", {"studies": selectors.studies_with_results()}
    )


@researcher_required
@require_GET
def study_results(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    view = selectors.results_view(
        study,
        character=request.GET.get("character") or None,
        round_=request.GET.get("round") or None,
        dimension=request.GET.get("dimension") or None,
    )
    template = "annotation/results.html#results" if request.htmx else "annotation/results.html"
    # Other apps' sections (the LLM judges beside the humans) come with the whole page.
    sections = [] if request.htmx else sections_of("results-study", request)
    return render(
        request,
        template,
        {
            "study": study,
            "view": view,
            "sections": sections,
            **export_context(request.user, study),
        },
    )


@researcher_required
@require_GET
def study_methods(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """The methods paragraph, in both languages, for the results as they stand."""
    study = get_object_or_404(Study, slug=slug)
    results = StudyResults.objects.filter(study=study).first()
    texts = []
    if results is not None:
        facts = methods.methods_facts(study, results)
        texts = [
            (language, methods.methods_text(facts, language)) for language in methods.LANGUAGES
        ]
    return render(
        request,
        "annotation/results_methods.html",
        {"study": study, "texts": texts, "version": methods.METHODS_VERSION},
    )


@study_manager_required
@require_POST
def refresh(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """Staff ask for a recompute now instead of waiting for the next one."""
    study = get_object_or_404(Study, slug=slug)
    if not services.study_results_refresh_request(study=study):
        # The beat schedule refreshes open studies once the broker is back.
        messages.error(
            request,
            _(
                "The task queue cannot be reached right now. Results refresh by themselves once it is back."
            ),
        )
        return redirect("results-study", slug=study.slug)
    messages.success(request, _("A recompute has been requested."))
    return redirect("results-study", slug=study.slug)
