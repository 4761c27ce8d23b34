"""The judges' staff page: the judge runs of every study and a form to start one, run by
the workers. Admins only: a run spends money on someone's API key. Progress and figures
are on the study's staff and results pages."""

from typing import Any

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Study
from collection.forms import RunControlForm
from collection.models import ModelEndpoint
from common.forms import REFUSED, attempt, submit
from common.roles import admin_required
from common.typing import AuthenticatedRequest
from dialogues.models import Source, SourceKind

from . import selectors, services
from .forms import JudgeRunStartForm
from .models import JudgeRun


def _page_context(posted: QueryDict | None = None, error: str | None = None) -> dict[str, Any]:
    return {
        "runs": selectors.runs_overview(),
        "studies": Study.objects.order_by("name"),
        "endpoints": ModelEndpoint.objects.order_by("name"),
        "sources": Source.objects.filter(kind=SourceKind.LLM).order_by("slug"),
        "form": posted or {"language": "zh"},
        # Apart: in a template, `form.items` of a plain dict is the dict's own method.
        "items_value": posted.get("items", "") if posted else "",
        "form_error": error,
    }


@admin_required
@require_http_methods(["GET", "POST"])
def judge_runs(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "judges/runs.html", _page_context())

    def start(data: dict[str, Any]) -> JudgeRun:
        return services.run_start(
            study=data["study"],
            endpoint=data["endpoint"],
            language=data["language"],
            both_orders=data["both_orders"],
            items=data["items"],
            self_source=data["self_source"],
        )

    error, run = attempt(JudgeRunStartForm(request.POST), start)
    if error is not None:
        return render(
            request, "judges/runs.html", _page_context(request.POST, error), status=REFUSED
        )
    services.run_enqueue(run=run)
    messages.success(request, _("The judge run has started."))
    return redirect("staff-study", slug=run.study.slug)


@admin_required
@require_POST
def judge_run_control(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    """Pause, resume or cancel a run from the judges' page."""
    run = get_object_or_404(JudgeRun, pk=run_id)
    return submit(
        request,
        RunControlForm(request.POST),
        lambda data: services.run_control(run=run, action=data["action"], by=request.user),
        success=lambda changed: (
            _("The judge run is now: %(status)s") % {"status": changed.get_status_display()}
        ),
        then=reverse("judge-runs"),
    )
