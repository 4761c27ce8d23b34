"""The writers' pages (`/write/`), the page of the person playing the user, and the staff's
runs and review. Plain form posts; htmx only polls for the simulated follow-up."""

import re
from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from common.parsing import whole_number
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest
from dialogues.models import Character, Scenario

from . import selectors, services
from .models import (
    ApplicationStatus,
    FollowupMode,
    TaskState,
    WriterApplication,
    WritingRun,
    WritingTask,
)

TASK_TEMPLATE = "writing/task.html"


def _pastes(request: AuthenticatedRequest) -> int:
    return min(whole_number(request.POST.get("pastes", "")) or 0, 10_000)


@login_required
@require_GET
def home(request: AuthenticatedRequest) -> HttpResponse:
    return render(
        request,
        "writing/home.html",
        {
            "overview": selectors.writer_overview(request.user),
            "break_due": selectors.writing_break_due(request.user),
        },
    )


@login_required
@require_POST
def apply(request: AuthenticatedRequest) -> HttpResponse:
    character_id = whole_number(request.POST.get("character", ""))
    character = (
        Character.objects.filter(pk=character_id).first() if character_id is not None else None
    )
    try:
        if character is None:
            raise services.WritingError("no_character", _("Choose a character."))
        services.writer_apply(
            user=request.user, character=character, sample=request.POST.get("sample", "")
        )
    except services.WritingError as refusal:
        return render(
            request,
            "writing/home.html",
            {
                "overview": selectors.writer_overview(request.user),
                "error": refusal.message,
                "posted": request.POST,
            },
            status=422,
        )
    messages.success(request, _("Thank you. Staff will read your sample and decide soon."))
    return redirect("write")


def _why_nothing_to_write(user: User) -> str:
    statuses = set(WriterApplication.objects.filter(user=user).values_list("status", flat=True))
    if ApplicationStatus.APPROVED in statuses:
        return _("Nothing to write right now. Thank you! Check back later.")
    if ApplicationStatus.PENDING in statuses:
        return _(
            "Your application to write is being reviewed. You can start writing once the "
            "study team approves it; this page will show it."
        )
    if statuses:
        return _("Your application to write was not approved.")
    return _("Apply to write a character first.")


@login_required
@require_GET
def next_task(request: AuthenticatedRequest) -> HttpResponse:
    task = services.task_next(user=request.user)
    if task is None:
        messages.info(request, _why_nothing_to_write(request.user))
        return redirect("write")
    return redirect("write-task", token=task.token)


def _task_context(task: WritingTask, request: AuthenticatedRequest, **extra: Any) -> dict[str, Any]:
    profile = getattr(task.character, "writing_profile", None)
    return {
        "task": task,
        "run": task.run,
        "profile": profile,
        "break_due": selectors.writing_break_due(request.user),
        "guidance_chars": 80,
        **extra,
    }


@login_required
@require_http_methods(["GET", "POST"])
def task(request: AuthenticatedRequest, token: str) -> HttpResponse:
    writing_task = (
        WritingTask.objects.select_related("run", "character__writing_profile", "scenario")
        .filter(token=token, writer=request.user)
        .first()
    )
    if writing_task is None:
        # Another writer's task looks exactly like one that does not exist.
        return render(request, "writing/gone.html", status=404)
    if request.method == "POST":
        return _task_submit(request, writing_task)
    template = TASK_TEMPLATE
    if request.htmx and writing_task.state == TaskState.AWAITING_FOLLOWUP:
        template = f"{TASK_TEMPLATE}#waiting"
    if request.htmx and writing_task.state != TaskState.AWAITING_FOLLOWUP:
        # The follow-up arrived: reload the whole page, now with the round-2 form.
        return HttpResponseClientRefresh()
    return render(request, template, _task_context(writing_task, request))


def _task_submit(request: AuthenticatedRequest, writing_task: WritingTask) -> HttpResponse:
    text = request.POST.get("answer", "")
    try:
        if writing_task.state == TaskState.ROUND_1:
            services.round_1_submit(
                user=request.user, token=writing_task.token, text=text, pastes=_pastes(request)
            )
        elif writing_task.state == TaskState.RETURNED and "answer_r1" in request.POST:
            services.returned_resubmit(
                user=request.user,
                token=writing_task.token,
                answer_r1=request.POST.get("answer_r1", ""),
                answer_r2=text,
                pastes=_pastes(request),
            )
        else:
            services.round_2_submit(
                user=request.user, token=writing_task.token, text=text, pastes=_pastes(request)
            )
    except services.WritingError as refusal:
        writing_task.refresh_from_db()
        context = _task_context(writing_task, request, error=refusal.message, posted=request.POST)
        return render(request, TASK_TEMPLATE, context, status=422)
    writing_task.refresh_from_db()
    if writing_task.state == TaskState.SUBMITTED:
        messages.success(request, _("Handed in. Thank you!"))
        return redirect("write-next")
    return redirect("write-task", token=writing_task.token)


@login_required
@require_POST
def followup_retry(request: AuthenticatedRequest, token: str) -> HttpResponse:
    try:
        services.followup_retry(user=request.user, token=token)
    except services.WritingError as refusal:
        messages.error(request, refusal.message)
    return redirect("write-task", token=token)


@login_required
@require_GET
def user_role(request: AuthenticatedRequest) -> HttpResponse:
    """The queue of the person who plays the user: write the follow-up to a fan's round-1
    answer."""
    followup = services.followup_next(user=request.user)
    return render(request, "writing/user_role.html", {"followup": followup})


@login_required
@require_POST
def user_role_submit(request: AuthenticatedRequest, followup_token: str) -> HttpResponse:
    try:
        services.followup_submit(
            user=request.user, followup_token=followup_token, text=request.POST.get("question", "")
        )
    except services.WritingError as refusal:
        followup = WritingTask.objects.filter(
            followup_token=followup_token, followup_writer=request.user
        ).first()
        return render(
            request,
            "writing/user_role.html",
            {"followup": followup, "error": refusal.message, "posted": request.POST},
            status=422,
        )
    messages.success(request, _("Sent. The writer can answer now."))
    return redirect("write-user")


# --- staff -------------------------------------------------------------------------------


def _staff_runs_page(
    request: AuthenticatedRequest,
    *,
    error: str | None = None,
    posted: QueryDict | None = None,
    status: int = 200,
) -> HttpResponse:
    from collection.models import ModelEndpoint

    return render(
        request,
        "writing/staff_runs.html",
        {
            "runs": selectors.runs_progress(),
            "applications": selectors.pending_applications(),
            "characters": Character.objects.order_by("work_zh", "name_zh"),
            "endpoints": ModelEndpoint.objects.all(),
            "modes": FollowupMode.choices,
            "error": error,
            "posted": posted or {},
            "chosen_characters": set(
                map(whole_number, posted.getlist("character") if posted else [])
            ),
        },
        status=status,
    )


@study_manager_required
@require_GET
def staff_runs(request: AuthenticatedRequest) -> HttpResponse:
    return _staff_runs_page(request)


def _deadline(text: str) -> datetime | None:
    if not text.strip():
        return None
    moment = parse_datetime(text.strip())
    if moment is None:
        raise services.WritingError("bad_deadline", _("The deadline is not a date and time."))
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


@study_manager_required
@require_POST
def staff_run_create(request: AuthenticatedRequest) -> HttpResponse:
    """A run from the staff page; every refusal re-shows the form with what was typed."""
    from collection.models import ModelEndpoint
    from collection.services import CollectionError, parse_scenario_numbers

    posted = request.POST
    try:
        try:
            numbers = parse_scenario_numbers(posted.get("scenarios", ""))
        except CollectionError as refusal:
            raise services.WritingError("bad_scenarios", refusal.message) from refusal
        limit_fields = ("writers_per_character", "lease_minutes", "min_chars", "max_chars")
        limits = {
            field: number
            for field in limit_fields
            if (number := whole_number(posted.get(field, ""))) is not None
        }
        if len(limits) < len(limit_fields) or limits["lease_minutes"] < 1:
            raise services.WritingError("bad_number", _("Every number must be a whole number."))
        ids = [whole_number(value) for value in posted.getlist("character")]
        characters = list(Character.objects.filter(pk__in=[i for i in ids if i is not None]))
        mode = posted.get("followup_mode", "")
        if mode not in FollowupMode.values:
            raise services.WritingError("bad_mode", _("Choose how the follow-up is written."))
        simulator = None
        if mode == FollowupMode.SIMULATOR:
            simulator_id = whole_number(posted.get("simulator", ""))
            if simulator_id is not None:
                simulator = ModelEndpoint.objects.filter(pk=simulator_id).first()
        name = services.clean_text(posted.get("name", ""), limit=200, field=_("The name"))
        slug = posted.get("source_slug", "").strip()
        if not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", slug):
            raise services.WritingError(
                "bad_slug", _("The source slug may use letters, digits, - and _ only.")
            )
        run = services.run_create(
            name=name,
            source_slug=slug,
            characters=characters,
            scenarios=list(Scenario.objects.filter(number__in=numbers)),
            followup_mode=mode,
            simulator=simulator,
            deadline=_deadline(posted.get("deadline", "")),
            writers_per_character=limits["writers_per_character"],
            lease_minutes=limits["lease_minutes"],
            min_chars=limits["min_chars"],
            max_chars=limits["max_chars"],
        )
    except services.WritingError as refusal:
        return _staff_runs_page(request, error=refusal.message, posted=posted, status=422)
    messages.success(request, _("Writing run created with %(n)d tasks.") % {"n": run.tasks.count()})
    return redirect("write-staff-run", run_id=run.pk)


@study_manager_required
@require_POST
def staff_application_review(request: AuthenticatedRequest, application_id: int) -> HttpResponse:
    application = get_object_or_404(WriterApplication, pk=application_id)
    decision = request.POST.get("decision")
    if decision not in ("approve", "reject"):
        messages.error(request, _("Choose approve or reject."))
    else:
        services.writer_review(
            application=application,
            reviewer=request.user,
            approve=decision == "approve",
            note=request.POST.get("note", ""),
        )
        messages.success(request, _("Decision saved."))
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("write-staff")
    return redirect(back)


@study_manager_required
@require_GET
def staff_run(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(WritingRun.objects.select_related("source"), pk=run_id)
    return render(
        request,
        "writing/staff_run.html",
        {"run": run, "tasks": selectors.run_tasks(run), "modes": FollowupMode},
    )


@study_manager_required
@require_http_methods(["GET", "POST"])
def staff_task(request: AuthenticatedRequest, task_id: int) -> HttpResponse:
    writing_task = get_object_or_404(
        WritingTask.objects.select_related("run__source", "character", "scenario", "writer"),
        pk=task_id,
    )
    context: dict[str, Any] = {"task": writing_task}
    if request.method == "POST":
        action = request.POST.get("action")
        note = request.POST.get("note", "")
        try:
            if action == "accept":
                services.task_accept(task=writing_task, reviewer=request.user, note=note)
            elif action == "return":
                services.task_return(task=writing_task, reviewer=request.user, note=note)
            elif action == "edit":
                services.task_edit(
                    task=writing_task,
                    reviewer=request.user,
                    answer_r1=request.POST.get("answer_r1", ""),
                    question_r2=request.POST.get("question_r2", ""),
                    answer_r2=request.POST.get("answer_r2", ""),
                    note=note,
                )
            else:
                raise services.WritingError("bad_action", _("Unknown action."))
        except services.WritingError as refusal:
            context.update(error=refusal.message, posted=request.POST)
            return render(request, "writing/staff_task.html", context, status=422)
        messages.success(request, _("Saved."))
        return redirect("write-staff-run", run_id=writing_task.run_id)
    return render(request, "writing/staff_task.html", context)
