"""The writers' pages (`/write/`), the page of the person playing the user, and the staff's
runs and review. Plain form posts; htmx only polls for the simulated follow-up."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRefresh

from collection.models import ModelEndpoint
from collection.services import numbers_as_ranges
from common.forms import REFUSED, attempt, submit
from common.parsing import whole_number
from common.redirects import safe_next
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest
from dialogues.models import Character
from dialogues.selectors import scenario_numbers_held

from . import selectors, services
from .forms import (
    AnswerForm,
    ApplicationReviewForm,
    FollowupForm,
    RunCreateForm,
    TaskReviewForm,
    WriterApplyForm,
)
from .models import (
    ApplicationStatus,
    FollowupMode,
    TaskState,
    WriterApplication,
    WritingRun,
    WritingTask,
)

TASK_TEMPLATE = "writing/task.html"


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
    error, _application = attempt(
        WriterApplyForm(request.POST),
        lambda data: services.writer_apply(
            user=request.user, character=data["character"], sample=data["sample"]
        ),
    )
    if error is not None:
        context = {
            "overview": selectors.writer_overview(request.user),
            "error": error,
            "posted": request.POST,
        }
        return render(request, "writing/home.html", context, status=REFUSED)
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
        # Another writer's task looks exactly like one that does not exist. A text sent to
        # it is shown back to its sender only (a task that ran out and was taken since).
        sent = request.POST.get("answer", "") if request.method == "POST" else ""
        return render(request, "writing/gone.html", {"sent_text": sent.strip()}, status=404)
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
    token = writing_task.token

    def hand_in(data: dict[str, Any]) -> None:
        if data["round"] == 1 or (
            data["round"] is None and writing_task.state == TaskState.ROUND_1
        ):
            services.round_1_submit(
                user=request.user, token=token, text=data["answer"], pastes=data["pastes"]
            )
        elif "answer_r1" in request.POST:  # a returned dialogue, both rounds
            services.returned_resubmit(
                user=request.user,
                token=token,
                answer_r1=data["answer_r1"],
                answer_r2=data["answer"],
                pastes=data["pastes"],
            )
        else:
            services.round_2_submit(
                user=request.user, token=token, text=data["answer"], pastes=data["pastes"]
            )

    error, _nothing = attempt(AnswerForm(request.POST), hand_in)
    writing_task.refresh_from_db()
    if error is not None:
        # A round-1 text refused because round 1 is done never fills the round-2 box.
        stale = request.POST.get("round") == "1" and writing_task.state != TaskState.ROUND_1
        posted = None if stale else request.POST
        context = _task_context(writing_task, request, error=error, posted=posted)
        return render(request, TASK_TEMPLATE, context, status=REFUSED)
    if writing_task.state == TaskState.SUBMITTED:
        # Back to the writing page, not straight into the next dialogue: taking one holds a
        # cell from the other writers for the run's lease, and starts its clock, whether or
        # not the writer goes on.
        messages.success(request, _("Handed in. Thank you!"))
        return redirect("write")
    return redirect("write-task", token=token)


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
    error, _task = attempt(
        FollowupForm(request.POST),
        lambda data: services.followup_submit(
            user=request.user, followup_token=followup_token, text=data["question"]
        ),
    )
    if error is not None:
        followup = WritingTask.objects.filter(
            followup_token=followup_token, followup_writer=request.user
        ).first()
        context = {"followup": followup, "error": error, "posted": request.POST}
        return render(request, "writing/user_role.html", context, status=REFUSED)
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
            # By default every scenario the database holds, as on the collection page.
            "held_scenarios": numbers_as_ranges(scenario_numbers_held()),
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


@study_manager_required
@require_POST
def staff_run_create(request: AuthenticatedRequest) -> HttpResponse:
    """A run from the staff page; every refusal shows the form again with what was typed."""

    def create(data: dict[str, Any]) -> WritingRun:
        return services.run_create(
            name=data["name"],
            source_slug=data["source_slug"],
            characters=list(data["character"]),
            scenarios=data["scenarios"],
            followup_mode=data["followup_mode"],
            simulator=data["simulator"],
            deadline=data["deadline"],
            writers_per_character=data["writers_per_character"],
            lease_minutes=data["lease_minutes"],
            min_chars=data["min_chars"],
            max_chars=data["max_chars"],
        )

    error, run = attempt(RunCreateForm(request.POST), create)
    if error is not None:
        return _staff_runs_page(request, error=error, posted=request.POST, status=REFUSED)
    messages.success(request, _("Writing run created with %(n)d tasks.") % {"n": run.tasks.count()})
    return redirect("write-staff-run", run_id=run.pk)


@study_manager_required
@require_POST
def staff_application_review(request: AuthenticatedRequest, application_id: int) -> HttpResponse:
    application = get_object_or_404(WriterApplication, pk=application_id)
    return submit(
        request,
        ApplicationReviewForm(request.POST),
        lambda data: services.writer_review(
            application=application,
            reviewer=request.user,
            approve=data["decision"] == "approve",
            note=data["note"],
        ),
        success=_("Decision saved."),
        then=safe_next(request, reverse("write-staff")),
    )


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

        def review(data: dict[str, Any]) -> None:
            if data["action"] == "accept":
                services.task_accept(task=writing_task, reviewer=request.user, note=data["note"])
            elif data["action"] == "return":
                services.task_return(task=writing_task, reviewer=request.user, note=data["note"])
            else:
                services.task_edit(
                    task=writing_task,
                    reviewer=request.user,
                    answer_r1=data["answer_r1"],
                    question_r2=data["question_r2"],
                    answer_r2=data["answer_r2"],
                    note=data["note"],
                )

        error, _nothing = attempt(TaskReviewForm(request.POST), review)
        if error is not None:
            context.update(error=error, posted=request.POST)
            return render(request, "writing/staff_task.html", context, status=REFUSED)
        messages.success(request, _("Saved."))
        return redirect("write-staff-run", run_id=writing_task.run_id)
    return render(request, "writing/staff_task.html", context)
