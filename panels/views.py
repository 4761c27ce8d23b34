"""The panel's door: `/join/<slug>/` takes the participant the panel sends, signs them in
to their pseudonymous account and sends them to `/join/<slug>/start/`. A refused link
creates nothing and says why on a page the participant can show the panel's support."""

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from common.typing import AuthenticatedRequest

from . import selectors, services
from .models import Provider

# 400 for a link that is wrong, 409 for a study that cannot take anyone now (it may again),
# 410 for one that has ended.
STATUS_OF = {"bad_id": 400, "bad_parameters": 400, "paused": 409, "full": 409, "closed": 410}


def _model_backend() -> str:
    """The site's password backend: a participant has no password, and the account
    backend (allauth) would want a verified email they do not have."""
    return next(
        path
        for path in settings.AUTHENTICATION_BACKENDS
        if issubclass(import_string(path), ModelBackend)
    )


def _refused(request: HttpRequest, message: str, status: int) -> HttpResponse:
    return render(request, "panels/refused.html", {"message": message}, status=status)


@never_cache
@require_GET
def join(request: HttpRequest, slug: str) -> HttpResponse:
    panel = selectors.panel_study_for_slug(slug)
    if panel is None:
        return _refused(request, _("There is no study at this address."), 404)
    parameters = request.GET
    prolific = panel.provider == Provider.PROLIFIC
    try:
        participant = services.participant_join(
            panel_study=panel,
            pid=parameters.get(panel.id_parameter, ""),
            session_id=parameters.get("SESSION_ID", "") if prolific else "",
            prolific_study_id=parameters.get("STUDY_ID", "") if prolific else "",
        )
    except services.PanelError as refusal:
        return _refused(request, refusal.message, STATUS_OF.get(refusal.code, 400))
    login(request, participant.user, backend=_model_backend())
    return redirect("panel-start", slug=slug)


@never_cache
@login_required
@require_GET
def start(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = selectors.panel_study_for_slug(slug)
    participant = selectors.participant_of(request.user, panel) if panel else None
    if panel is None or participant is None:
        raise Http404
    return render(
        request,
        "panels/start.html",
        {
            "panel": panel,
            "participant": participant,
            "completion_link": services.completion_link(participant),
        },
    )
