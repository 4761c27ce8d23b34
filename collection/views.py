"""Staff pages for collection runs: the list and a form to start one, a run's progress
with pause / resume / cancel, and the review of flagged answers. Admins only: a run
spends money on someone's API key. Plain form posts work; htmx refreshes the progress."""

from typing import Any

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.forms import REFUSED, attempt, submit
from common.roles import admin_required
from common.text import plain_text
from common.typing import AuthenticatedRequest
from dialogues.models import Character
from dialogues.selectors import scenario_numbers_held

from . import selectors, services
from .forms import AnswerReviewForm, RunControlForm, RunStartForm
from .guards import FLAG_LABELS
from .models import CollectionRun, GeneratedAnswer, ModelEndpoint


def _form_context(posted: QueryDict | None = None, error: str | None = None) -> dict[str, Any]:
    return {
        "runs": selectors.runs_overview(),
        "endpoints": ModelEndpoint.objects.order_by("name"),
        "characters": Character.objects.order_by("pk"),
        # By default every scenario the database holds: the demo data has 8 of the 60.
        "form": posted
        or {
            "scenarios": services.numbers_as_ranges(scenario_numbers_held()),
            "rounds": "1,2",
        },
        "form_error": error,
        # A refused form comes back with every choice as it was sent (the endpoints and
        # characters too: reset to the defaults, a corrected form would start another run).
        "chosen_characters": posted.getlist("characters") if posted is not None else None,
    }


@admin_required
@require_http_methods(["GET", "POST"])
def run_list(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "collection/runs.html", _form_context())

    def start(data: dict[str, Any]) -> CollectionRun:
        return services.run_start(
            source_slug=data["endpoint"].source_slug,
            endpoint=data["endpoint"],
            simulator_endpoint=data["simulator"],
            characters=list(data["characters"]),
            scenarios=data["scenarios"],
            rounds=data["rounds"],
            simulator_prompt=plain_text(data["simulator_prompt"]),
            created_by=request.user,
        )

    error, run = attempt(RunStartForm(request.POST), start)
    if error is not None:
        context = _form_context(request.POST, error)
        return render(request, "collection/runs.html", context, status=REFUSED)
    services.run_enqueue(run=run)
    messages.success(request, _("The run has started."))
    return redirect("collection-run", run_id=run.pk)


@admin_required
@require_GET
def run_detail(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(
        CollectionRun.objects.select_related("source", "endpoint", "simulator_endpoint"), pk=run_id
    )
    flagged = list(selectors.flagged_answers(run))
    round_1 = selectors.round_1_of(flagged)
    for answer in flagged:
        answer.flag_labels = [_(FLAG_LABELS.get(flag, flag)) for flag in answer.flags]
        answer.round_1_answer = round_1.get(answer.pk, "")
    context = {"run": run, "progress": selectors.run_progress(run), "flagged": flagged}
    template = "collection/run.html#progress" if request.htmx else "collection/run.html"
    return render(request, template, context)


@admin_required
@require_POST
def run_control(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(CollectionRun, pk=run_id)
    return submit(
        request,
        RunControlForm(request.POST),
        lambda data: services.run_control(run=run, action=data["action"], by=request.user),
        success=lambda changed: (
            _("The run is now: %(status)s") % {"status": changed.get_status_display()}
        ),
        then=reverse("collection-run", args=[run.pk]),
    )


@admin_required
@require_POST
def answer_review(request: AuthenticatedRequest, answer_id: int) -> HttpResponse:
    generated = get_object_or_404(GeneratedAnswer, pk=answer_id)

    def review(data: dict[str, Any]) -> None:
        if data["action"] == "regenerate":
            services.generated_answer_regenerate(generated=generated, by=request.user)
        else:
            text = data["text"] if data["action"] == "edit" else None
            services.generated_answer_accept(generated=generated, by=request.user, text=text)

    return submit(
        request,
        AnswerReviewForm(request.POST),
        review,
        success=lambda _result: (
            _(
                "Asked the model again: the new answer appears here when it comes, and is "
                "listed for review again if it is flagged too."
            )
            if request.POST.get("action") == "regenerate"
            else _("Review saved.")
        ),
        then=reverse("collection-run", args=[generated.run_id]),
    )
