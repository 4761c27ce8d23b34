"""The rating screen. Full pages for plain requests, the `item` fragment for htmx."""

import logging
import math
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import time_format
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url

from common.destinations import destination_for
from common.parsing import whole_number
from common.typing import AuthenticatedRequest

from .. import selectors, services
from ..models import Assignment, AssignmentState
from ..selectors import Step

TEMPLATE = "annotation/annotate.html"
# From five minutes before the item's reservation ends, the page says so and offers to
# keep it (annotate.js reads this figure from the page).
RESERVATION_WARNING_SECONDS = 5 * 60
# Said on a refused submission whose item may come back to the annotator; read by
# annotate.js, which otherwise drops the item's draft once the server has answered.
DRAFT_HEADER = "Rating-Draft"
# Keyed by the stored value, which is what `Assignment.state` reads back as.
# Said on whatever page comes next: the next item, the "nothing left" page, or another
# app's end of the work, so none of them promises a next item.
_DONE_WITH = {
    AssignmentState.SUBMITTED.value: gettext_lazy("You already submitted that item."),
    AssignmentState.SKIPPED.value: gettext_lazy("You skipped that item."),
    AssignmentState.EXPIRED.value: gettext_lazy("That item is no longer reserved for you."),
}

logger = logging.getLogger(__name__)

_SKIPPED = gettext_lazy("Skipped: that item will not come back to you. Here is your next one.")
_KEPT = gettext_lazy("This item is kept for you until %(time)s.")
_WAITING_FOR_REVIEW = gettext_lazy(
    "Rating opens once the study team has approved your application. Its status is below."
)


def _render(
    request: AuthenticatedRequest,
    assignment: Assignment | None,
    *,
    error: str | None = None,
    posted: dict[str, str] | None = None,
    status: int = 200,
    notice: str | None = None,
) -> HttpResponse:
    study_id = assignment.item.study_id if assignment is not None else None
    context: dict[str, Any] = {
        "progress": selectors.progress_of(request.user, study_id=study_id),
        "error": error,
        "notice": notice,
        "posted": posted or {},
    }
    if assignment is not None:
        context["item"] = selectors.shown_item(assignment)
        context["reservation"] = _reservation(assignment)
    elif error is None and (done := destination_for("work-done", request.user)):
        # Nothing left here, and another app has this person's end of the work (a panel
        # participant's completion page).
        return _redirect(request, done)
    if not request.htmx:
        # Outside the fragment htmx swaps: a panel participant's "Leave this study".
        context["leave_url"] = destination_for("work-leave", request.user)
    template = f"{TEMPLATE}#work" if request.htmx else TEMPLATE
    response = render(request, template, context, status=status)
    if request.htmx and assignment is not None:
        push_url(response, reverse("annotate-item", args=[assignment.token]))
    elif request.htmx:
        push_url(response, reverse("annotate"))
    return response


def _reservation(assignment: Assignment) -> dict[str, Any]:
    """How long the item stays reserved for the annotator, and whether it can be kept
    longer (`services.lease_keep`): the page counts it down (annotate.js)."""
    left = (assignment.expires_at - timezone.now()).total_seconds()
    return {
        "token": assignment.token,
        "seconds_left": max(0, int(left)),
        "minutes_left": max(0, math.ceil(left / 60)),
        "soon": left <= RESERVATION_WARNING_SECONDS,
        "warning_seconds": RESERVATION_WARNING_SECONDS,
        "can_keep": left > 0 and assignment.expires_at < services.kept_until_limit(assignment),
    }


def _redirect(request: AuthenticatedRequest, address: str) -> HttpResponse:
    return HttpResponseClientRedirect(address) if request.htmx else redirect(address)


def _stopped(request: AuthenticatedRequest) -> HttpResponse | None:
    """Where to go instead of a new item, when another app ends this person's work (a
    panel participant whose batch is over or whose time is up)."""
    stop = destination_for("work-stop", request.user)
    return None if stop is None else _redirect(request, stop)


def _not_ready(request: AuthenticatedRequest) -> HttpResponse | None:
    step = selectors.annotator_step(request.user)
    if step == Step.READY:
        return None
    # Someone whose way in belongs to another app (a panel participant's start page)
    # goes back there rather than to the site's own screening.
    setup = destination_for("work-setup", request.user)
    if setup:
        return _redirect(request, setup)
    if step == Step.WAITING:
        # Otherwise "Rate answers" would seem to lead nowhere while staff review them.
        messages.info(request, _WAITING_FOR_REVIEW)
    return redirect("screening")


# The rating pages are never cached: Back or a reload must ask the server again, which
# knows whether the item was already submitted.
@never_cache
@login_required
@require_GET
def annotate(request: AuthenticatedRequest) -> HttpResponse:
    """Send the annotator to their current item, or to what they must do first."""
    if (detour := _stopped(request) or _not_ready(request)) is not None:
        return detour
    assignment = services.assignment_next(user=request.user)
    if assignment is None:
        return _render(request, None)
    return redirect("annotate-item", token=assignment.token)


def _own_assignment(request: AuthenticatedRequest, token: str) -> Assignment:
    """The annotator's lease behind `token`, with its item and study."""
    assignment = selectors.own_lease(request.user, token)
    if assignment is None:
        # Another annotator's token looks exactly like a token that does not exist.
        raise Http404
    return assignment


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def item(request: AuthenticatedRequest, token: str) -> HttpResponse:
    # The lease and whether the annotator may rate are read together: this page and
    # the submission are the loop's every request. Only when that read cannot say they
    # are ready is the whole step read, to send them where they must go.
    at_work = selectors.lease_at_work(request.user, token)
    if not at_work.ready and (detour := _not_ready(request)) is not None:
        return detour
    assignment = at_work.assignment
    if assignment is None:
        # Another annotator's token looks exactly like a token that does not exist.
        raise Http404
    if request.method == "POST":
        # Without another live lease (a second tab's), the next item is a new lease.
        return _submit(request, assignment, known_without_lease=not at_work.other_live_lease)
    if assignment.state != AssignmentState.ACTIVE:
        # Back or an old bookmark: the item is done with; go on to the current one, or
        # to where this person's work ended (a panel participant's code), said once there.
        if (stop := _stopped(request)) is not None:
            return stop
        messages.info(request, _DONE_WITH[assignment.state])
        return redirect("annotate")
    try:
        # Read, not locked: showing the page changes nothing, and the submission checks
        # the lease again under a lock.
        services.lease_check(assignment)
    except services.AnnotationError as refusal:
        if refusal.code == "lease_expired":
            # Back from a break: said on the next item, not on a page claiming that
            # nothing is left to rate.
            messages.error(request, refusal.message)
            return redirect("annotate")
        return _render(request, None, error=refusal.message, status=409)
    return _render(request, assignment)


def submission_from_post(
    post: QueryDict, assignment: Assignment
) -> tuple[services.Submission, dict[str, str]]:
    """Read the form. Values that are not whole numbers are passed on as 0, which the
    service refuses as out of range; missing values are simply absent."""
    ratings, posted = {}, {}
    positions, metrics = selectors.form_fields_of(assignment)
    for position in positions:
        for metric in metrics:
            name = f"{position}-{metric.slug}"
            raw = post.get(name, "").strip()
            if raw == "":
                continue
            posted[name] = raw
            ratings[(position, metric.slug)] = whole_number(raw) or 0
    for name in ("preference", "guess", "comment"):
        posted[name] = post.get(name, "")
    return (
        services.Submission(
            ratings=ratings,
            preference=posted["preference"],
            human_guess=posted["guess"],
            comment=posted["comment"],
        ),
        posted,
    )


def _submit(
    request: AuthenticatedRequest, assignment: Assignment, *, known_without_lease: bool
) -> HttpResponse:
    submission, posted = submission_from_post(request.POST, assignment)
    try:
        services.judgment_submit(
            user=request.user,
            token=assignment.token,
            submission=submission,
            assignment=assignment,
        )
    except services.AnnotationError as refusal:
        if refusal.code == "already_submitted":
            # A double click or a replayed POST: the first one counted; move on.
            return _next_after_saving(
                request, notice=refusal.message, known_without_lease=known_without_lease
            )
        if refusal.code == "lease_expired" and _stopped(request) is None:
            # The item's time ran out while the page was open: say so above the next
            # item rather than on a page that claims nothing is left to rate. A full page
            # goes there by a redirect, so that a reload does not post again.
            if not request.htmx:
                messages.error(request, refusal.message)
                return redirect("annotate")
            next_lease = services.assignment_next(user=request.user)
            return _render(request, next_lease, error=refusal.message, status=409)
        if refusal.code in ("lease_expired", "study_closed", "study_paused", "skipped"):
            refused = _render(request, None, error=refusal.message, status=409)
            if refusal.code == "study_paused":
                # The item may come back when the study reopens: the page keeps the
                # draft of it (annotate.js), which it drops on any other refusal.
                refused[DRAFT_HEADER] = "keep"
            return refused
        return _render(request, assignment, error=refusal.message, posted=posted, status=422)
    return _next_after_saving(request, known_without_lease=known_without_lease)


def _next_after_saving(
    request: AuthenticatedRequest, notice: str | None = None, *, known_without_lease: bool
) -> HttpResponse:
    """The judgment is committed: whatever happens while fetching the next item, the
    answer must not claim it failed (the annotator would rate it again, or stop trusting
    the page). A failure here says "saved" and offers to fetch the next item again."""
    try:
        return _next(request, notice=notice, known_without_lease=known_without_lease)
    except Exception:
        logger.exception("judgment saved, but the next item could not be served")
        # Rendered without the request: its context processors may need the database
        # that just failed.
        response = HttpResponse(render_to_string("annotation/_saved.html"))
        if request.htmx:
            push_url(response, reverse("annotate"))
        return response


def _next(
    request: AuthenticatedRequest, notice: str | None = None, *, known_without_lease: bool = False
) -> HttpResponse:
    if not request.htmx:
        return HttpResponseRedirect(reverse("annotate"))
    if (stop := _stopped(request)) is not None:
        return stop
    assignment = services.assignment_next(
        user=request.user, known_without_lease=known_without_lease
    )
    return _render(request, assignment, notice=notice)


@login_required
@require_POST
def skip(request: AuthenticatedRequest, token: str) -> HttpResponse:
    if (detour := _not_ready(request)) is not None:
        return detour
    assignment = _own_assignment(request, token)
    try:
        services.assignment_skip(
            user=request.user, token=token, reason=request.POST.get("reason", "")
        )
    except services.AnnotationError as refusal:
        if refusal.code in ("skip_reason", "skips_used"):  # the item stays theirs to rate
            return _render(request, assignment, error=refusal.message, status=422)
        return _render(request, None, error=refusal.message, status=409)
    # Said, so that the next item is not taken for the same one or for a lost skip.
    if not request.htmx:
        messages.info(request, _SKIPPED)
    return _next(request, notice=str(_SKIPPED))


@never_cache
@login_required
@require_POST
def keep(request: AuthenticatedRequest, token: str) -> HttpResponse:
    """Keep the item reserved for longer, asked near the end of its reservation: the
    reservation's line again (htmx), or the item's page with what became of it."""
    # A panel participant whose batch is over or whose time is up keeps nothing: their end.
    if (detour := _stopped(request) or _not_ready(request)) is not None:
        return detour
    assignment = _own_assignment(request, token)
    error: str | None = None
    try:
        assignment = services.lease_keep(user=request.user, token=token)
    except services.AnnotationError as refusal:
        error, status, still_theirs = refusal.message, 409, refusal.code == "kept_long"
    else:
        until = time_format(timezone.localtime(assignment.expires_at))
        status, still_theirs = 200, True
    if not request.htmx:
        if error is None:
            messages.info(request, _KEPT % {"time": until})
        else:
            messages.error(request, error)
        # An item no longer theirs (its time ran out, the study paused) is left for the next.
        return redirect("annotate-item", token=token) if still_theirs else redirect("annotate")
    context = {"reservation": _reservation(assignment), "reservation_error": error}
    return render(request, "annotation/_reservation.html", context, status=status)
