"""Staff pages for collection runs: the list and a form to start one, a run's progress
with pause / resume / cancel, and the review of flagged answers. Admins only: a run
spends money on someone's API key. Plain form posts work; htmx refreshes the progress."""

from typing import Any

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.parsing import whole_number
from common.roles import admin_required
from common.text import plain_text
from common.typing import AuthenticatedRequest
from dialogues.models import Character

from . import selectors, services
from .guards import FLAG_LABELS
from .models import CollectionRun, GeneratedAnswer, ModelEndpoint


def _form_context(form: QueryDict | None = None, error: str | None = None) -> dict[str, Any]:
    return {
        "runs": selectors.runs_overview(),
        "endpoints": ModelEndpoint.objects.order_by("name"),
        "characters": Character.objects.order_by("pk"),
        # By default every scenario the database holds: the demo data has 8 of the 60.
        "form": form
        or {
            "scenarios": services.numbers_as_ranges(selectors.scenario_numbers_held()),
            "rounds": "1,2",
        },
        "form_error": error,
    }


@admin_required
@require_http_methods(["GET", "POST"])
def run_list(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "collection/runs.html", _form_context())
    form = request.POST
    try:
        endpoints = ModelEndpoint.objects.in_bulk(
            [whole_number(form.get("endpoint")), whole_number(form.get("simulator"))]
        )
        endpoint = endpoints.get(whole_number(form.get("endpoint")))
        simulator = endpoints.get(whole_number(form.get("simulator")))
        if endpoint is None or simulator is None:
            raise services.CollectionError("bad_endpoint", _("Choose an endpoint and a simulator."))
        if not endpoint.source_slug:
            raise services.CollectionError(
                "bad_endpoint", _("This endpoint names no source; set its source slug first.")
            )
        character_ids = [whole_number(value) for value in form.getlist("characters")]
        characters = list(
            Character.objects.filter(pk__in=[pk for pk in character_ids if pk is not None])
        )
        if not characters or len(characters) != len(set(character_ids)):
            raise services.CollectionError("unknown_character", _("Choose known characters."))
        run = services.run_start(
            source_slug=endpoint.source_slug,
            endpoint=endpoint,
            simulator_endpoint=simulator,
            characters=characters,
            scenarios=services.scenarios_numbered(
                services.parse_scenario_numbers(form.get("scenarios", ""))
            ),
            rounds=services.parse_rounds(form.get("rounds", "")),
            simulator_prompt=plain_text(form.get("simulator_prompt", "")),
            created_by=request.user,
        )
    except services.CollectionError as refusal:
        return render(
            request, "collection/runs.html", _form_context(form, refusal.message), status=400
        )
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
    for answer in flagged:
        answer.flag_labels = [_(FLAG_LABELS.get(flag, flag)) for flag in answer.flags]
    context = {"run": run, "progress": selectors.run_progress(run), "flagged": flagged}
    template = "collection/run.html#progress" if request.htmx else "collection/run.html"
    return render(request, template, context)


@admin_required
@require_POST
def run_control(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(CollectionRun, pk=run_id)
    try:
        run = services.run_control(run=run, action=request.POST.get("action", ""), by=request.user)
    except services.CollectionError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(
            request, _("The run is now: %(status)s") % {"status": run.get_status_display()}
        )
    return redirect("collection-run", run_id=run.pk)


@admin_required
@require_POST
def answer_review(request: AuthenticatedRequest, answer_id: int) -> HttpResponse:
    generated = get_object_or_404(GeneratedAnswer, pk=answer_id)
    action = request.POST.get("action")
    try:
        if action == "accept":
            services.generated_answer_accept(generated=generated, by=request.user)
        elif action == "edit":
            services.generated_answer_accept(
                generated=generated, by=request.user, text=request.POST.get("text", "")
            )
        elif action == "regenerate":
            services.generated_answer_regenerate(generated=generated, by=request.user)
        else:
            raise services.CollectionError("bad_action", _("Choose accept, edit or regenerate."))
    except services.CollectionError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(request, _("Review saved."))
    return redirect("collection-run", run_id=generated.run_id)
