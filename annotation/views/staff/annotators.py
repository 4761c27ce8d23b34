"""The annotator directory, one annotator's record, suspension and quality flags."""

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from common.forms import submit
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest

from ... import selectors, services
from ...models import AnnotatorProfile, ProfileStatus, QualityFlag
from .common import page_of
from .forms import AnnotatorFilterForm, FlagResolveForm, ReasonForm


@study_manager_required
@require_GET
def annotator_directory(request: AuthenticatedRequest) -> HttpResponse:
    form = AnnotatorFilterForm(request.GET)
    filters = form.filters()
    page = page_of(
        form, selectors.annotator_profiles(status=filters["status"], search=filters["q"])
    )
    return render(
        request,
        "staff/annotators.html",
        {
            "page": page,
            "rows": selectors.annotator_rows(page.object_list),
            "statuses": ProfileStatus.choices,
            "filters": filters,
        },
    )


@study_manager_required
@require_GET
def annotator_detail(request: AuthenticatedRequest, profile_id: int) -> HttpResponse:
    profile = get_object_or_404(AnnotatorProfile.objects.select_related("user"), pk=profile_id)
    return render(
        request,
        "staff/annotator.html",
        {"profile": profile, **selectors.annotator_detail(profile)},
    )


SUSPENSION = {
    "suspend": (services.annotator_suspend, gettext_lazy("The annotator is suspended.")),
    "reinstate": (services.annotator_reinstate, gettext_lazy("The annotator is reinstated.")),
}


@study_manager_required
@require_POST
def annotator_suspension(
    request: AuthenticatedRequest, profile_id: int, action: str
) -> HttpResponse:
    profile = get_object_or_404(AnnotatorProfile, pk=profile_id)
    if action not in SUSPENSION:
        raise Http404
    change, done = SUSPENSION[action]
    return submit(
        request,
        ReasonForm(request.POST),
        lambda data: change(profile=profile, actor=request.user, reason=data["reason"]),
        success=str(done),
        then=reverse("staff-annotator", args=[profile.pk]),
    )


@study_manager_required
@require_POST
def flag_resolve(request: AuthenticatedRequest, flag_id: int) -> HttpResponse:
    """Mark a flag about an annotator's work as reviewed, saying what was found."""
    flag = get_object_or_404(QualityFlag.objects.select_related("study"), pk=flag_id)
    profile = get_object_or_404(AnnotatorProfile, user_id=flag.annotator_id)
    then = reverse("staff-annotator", args=[profile.pk])
    if flag.resolved_at is not None:
        messages.error(request, _("This flag has already been reviewed."))
        return redirect(then)
    return submit(
        request,
        FlagResolveForm(request.POST),
        lambda data: services.flag_resolve(flag=flag, resolved_by=request.user, note=data["note"]),
        success=_("The flag is marked as reviewed."),
        then=then,
    )
