"""Screening review: the queue of applications, the decision on several at once, and one
applicant's applications."""

from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from common.forms import attempt
from common.roles import study_manager_required
from common.sections import sections_of
from common.site import site_url
from common.typing import AuthenticatedRequest
from dialogues.models import Character

from ... import selectors, services
from ...models import AnnotatorProfile, QualificationStatus
from .common import back, page_of
from .forms import ScreeningFilterForm, ScreeningReviewForm


def _queue_context(request: AuthenticatedRequest) -> dict[str, Any]:
    # After a decision, the queue is shown again with the filters the form carried.
    data = request.POST.dict() | {key: value for key, value in request.GET.items() if value}
    form = ScreeningFilterForm(data)
    filters = form.filters()
    return {
        "page": page_of(
            form,
            selectors.screening_queue(status=filters["status"], character_id=filters["character"]),
        ),
        "counts": selectors.queue_counts(),
        "statuses": QualificationStatus.choices,
        "characters": Character.objects.order_by("pk"),
        "filters": filters,
    }


@study_manager_required
@require_GET
def screening_queue(request: AuthenticatedRequest) -> HttpResponse:
    if request.htmx:
        return render(request, "staff/screening.html#queue", _queue_context(request))
    # Sections other apps add (fan writing: its writers' applications).
    context = _queue_context(request) | {"sections": sections_of("staff-screening", request)}
    return render(request, "staff/screening.html", context)


@study_manager_required
@require_POST
def screening_review(request: AuthenticatedRequest) -> HttpResponse:
    """Approve or reject the chosen applications, one note for all of them."""
    form = ScreeningReviewForm(request.POST)
    error, _reviewed = attempt(
        form,
        lambda data: services.qualifications_review(
            qualifications=data["qualification"],
            reviewer=request.user,
            approve=data["decision"] == "approve",
            note=data["note"],
            site_url=site_url(request),
        ),
    )
    if error is None:
        n = len(form.cleaned_data["qualification"])
        if form.cleaned_data["decision"] == "approve":
            done = ngettext("%(n)d application approved.", "%(n)d applications approved.", n)
        else:
            done = ngettext("%(n)d application rejected.", "%(n)d applications rejected.", n)
        messages.success(request, done % {"n": n})
    if request.htmx and not request.POST.get("next"):
        context = _queue_context(request)
        context["error"] = error
        return render(request, "staff/screening.html#queue", context, status=422 if error else 200)
    if error:
        messages.error(request, error)
    return redirect(back(request, reverse("staff-screening")))


@study_manager_required
@require_GET
def applicant(request: AuthenticatedRequest, profile_id: int) -> HttpResponse:
    profile = get_object_or_404(AnnotatorProfile.objects.select_related("user"), pk=profile_id)
    return render(
        request,
        "staff/applicant.html",
        {
            "profile": profile,
            "qualifications": profile.qualifications.select_related(
                "character", "reviewed_by"
            ).order_by("character_id"),
        },
    )
