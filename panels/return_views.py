"""How a batch ends without a code: `/join/<slug>/leave/` (`panel-leave`), where a
participant leaves the study after confirming (a return: their leases are freed at once),
and `/panels/prolific/webhook/` (`panel-prolific-webhook`), where Prolific tells us of a
submission returned or timed out on its side. Views only: the checks are in
`panels.webhooks`, the changes in the services."""

import logging
import time

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from common.forms import REFUSED, attempt
from common.typing import AuthenticatedRequest

from . import forms, selectors, services, webhooks
from .models import ParticipantState
from .views import participant_required

logger = logging.getLogger(__name__)


def leave_address(user) -> str | None:
    """The participant's "Leave this study" page while their batch is on; None for anyone
    else (the rating page asks through `common.destinations`, "work-leave")."""
    batch = selectors.batch_of(user)
    if batch is None:
        return None
    if batch.state != ParticipantState.STARTED or batch.late:
        return None
    return reverse("panel-leave", args=[batch.slug])


@never_cache
@participant_required
@require_http_methods(["GET", "POST"])
def leave(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """ "Leave this study": a confirmation, then the return. Once left, the page says so
    (a reload or Back shows the same); a batch that ended otherwise is on its end page.
    Another person's page does not exist (404)."""
    panel = selectors.panel_study_for_slug(slug)
    participant = selectors.participant_of(request.user, panel) if panel else None
    if panel is None or participant is None:
        raise Http404
    context = {"panel": panel, "participant": participant}
    if participant.state == ParticipantState.RETURNED:
        return render(request, "panels/leave.html", {**context, "left": True})
    if participant.state != ParticipantState.STARTED or timezone.now() >= participant.deadline:
        return redirect("panel-done", slug=slug)
    if request.method == "POST":
        error, _result = attempt(
            forms.LeaveForm(request.POST),
            lambda cleaned: services.participant_return(
                participant=participant, actor=request.user, source="participant"
            ),
        )
        if error is None:
            return redirect("panel-leave", slug=slug)
        return render(request, "panels/leave.html", {**context, "error": error}, status=REFUSED)
    return render(request, "panels/leave.html", context)


def _answer(status: int, **content) -> JsonResponse:
    return JsonResponse(content, status=status)


@csrf_exempt
@require_POST
def prolific_webhook(request: HttpRequest) -> HttpResponse:
    """Prolific's signed status event. 2xx once recorded (a redelivery too), so Prolific
    stops sending it; 4xx, changing nothing, for what is not signed by Prolific within
    five minutes, too large or unreadable; 503 while no secret is configured, so that
    Prolific keeps the events for later."""
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    if not secret:
        logger.error("Prolific webhook refused: PROLIFIC_WEBHOOK_SECRET is not set")
        return _answer(503, error="webhook not configured")
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return _answer(400, error="bad content length")
    if length > webhooks.MAX_BODY_BYTES:
        return _answer(413, error="body too large")
    try:
        event = webhooks.verified_event(
            secret=secret, headers=request.headers, body=request.body, now=time.time()
        )
    except webhooks.WebhookRefused as refusal:
        logger.warning("Prolific webhook refused: %s", refusal.reason)
        return _answer(refusal.status, error=refusal.reason)
    outcome, new = services.prolific_event_receive(event=event)
    logger.info("Prolific webhook %s %s: %s", event.event_type, event.status, outcome)
    return _answer(200, outcome=outcome, duplicate=not new)
