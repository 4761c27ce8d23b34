"""The panel's door: `/join/<slug>/` takes the participant the panel sends, signs them in
to their pseudonymous account and sends them to `/join/<slug>/start/` (consent, the
characters they know, their quizzes on a quiz study, then the rating page);
`/join/<slug>/done/` ends their batch (completion, screen-out or time-out). A refused link
creates nothing and says why on a page the participant can show the panel's support."""

import math
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.backends import ModelBackend
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from annotation.models import QualificationStatus
from common.forms import REFUSED, attempt
from common.typing import AuthenticatedRequest

from . import forms, selectors, services
from .models import PanelStudy, Participant, ParticipantState, Provider

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


def _refused(
    request: HttpRequest, message: str, status: int, panel: PanelStudy | None = None
) -> HttpResponse:
    # 409 and 410: the link was right, but the study cannot take anyone now. 403: the
    # participant's session is gone, not their work.
    context = {
        "message": message,
        "cannot_take": status in (409, 410),
        "signed_out": status == 403,
        "prolific": panel is None or panel.provider == Provider.PROLIFIC,
    }
    return render(request, "panels/refused.html", context, status=status)


def participant_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A participant's own pages: someone not signed in (a cleared cookie, another browser)
    is asked to come back by the panel's link, which signs them in again; a participant has
    no password for the site's log-in page."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return _refused(
                request,
                _("Please open this study again from the link on the panel's page."),
                403,
            )
        return view(request, *args, **kwargs)

    return guarded


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
        return _refused(request, refusal.message, STATUS_OF.get(refusal.code, 400), panel)
    # Signing in again would give this browser a new form token, and the pages of the
    # participant's other tabs would then be refused when they post their rating.
    if request.user.pk != participant.user_id:
        login(request, participant.user, backend=_model_backend())
    return redirect("panel-start", slug=slug)


def _own(request: AuthenticatedRequest, slug: str) -> tuple[PanelStudy, Participant]:
    """The panel study and the signed-in person's participation in it; 404 for anyone
    else (another participant's pages look like pages that do not exist)."""
    panel = selectors.panel_study_for_slug(slug)
    participant = selectors.participant_of(request.user, panel) if panel else None
    if panel is None or participant is None:
        raise Http404
    return panel, participant


Step = tuple[
    str,
    "forms.ConsentForm | forms.CharactersForm | forms.QuizForm",
    Callable[[dict[str, Any]], Any],
]


def _step(
    request: AuthenticatedRequest, panel: PanelStudy, participant: Participant
) -> Step | None:
    """The step the participant is at, with its form and the service that takes it; None
    once they may rate."""
    data = request.POST or None
    if not selectors.participant_consented(participant):
        return (
            "consent",
            forms.ConsentForm(data),
            lambda cleaned: services.participant_consent(participant=participant),
        )
    if selectors.participant_admitted(participant):
        return None
    if panel.quiz:
        return _quiz_step(data, panel, participant)
    return (
        "characters",
        forms.CharactersForm(data, study=panel.study),
        lambda cleaned: services.participant_admit(
            participant=participant, characters=cleaned["characters"]
        ),
    )


def _quiz_step(data: Any, panel: PanelStudy, participant: Participant) -> Step | None:
    """On a quiz study: the characters (those with a quiz), then one quiz per character
    chosen. None once every quiz is taken (the screening is then settled)."""
    if not selectors.screening_of(participant):
        return (
            "characters",
            forms.CharactersForm(data, study=panel.study, offered=services.quiz_characters(panel)),
            lambda cleaned: services.participant_characters_choose(
                participant=participant, characters=cleaned["characters"]
            ),
        )
    quiz = services.quiz_next(participant)
    if quiz is None:
        return None
    character, questions = quiz
    form = forms.QuizForm(data, character=character, questions=questions)
    return (
        "quiz",
        form,
        lambda cleaned: services.participant_quiz_submit(
            participant=participant, character=cleaned["character"], choices=form.choices()
        ),
    )


def _settled(participant: Participant) -> Participant:
    """A quiz study's participant whose quizzes are all taken, admitted or screened out
    (normally done by their last quiz; here when it was taken on another page)."""
    if selectors.participant_admitted(participant):
        return participant
    return services.participant_screening_settle(participant=participant)


def _quiz_outcome(result: Any) -> str:
    name = result.character.name_zh
    if result.status in (QualificationStatus.PASSED, QualificationStatus.APPROVED):
        return _("Quiz for %(name)s passed.") % {"name": name}
    return _("Quiz for %(name)s not passed.") % {"name": name}


@never_cache
@participant_required
@require_http_methods(["GET", "POST"])
def start(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """The participant's way in: consent, the characters they know (on a quiz study, one
    quiz per character chosen), the instructions and the button to the rating page. Each
    post is one step; a refused one is shown again."""
    panel, participant = _own(request, slug)
    if participant.state != ParticipantState.STARTED or timezone.now() >= participant.deadline:
        return redirect("panel-done", slug=slug)
    # Time left in minutes, not the deadline's clock time: the participant's time zone is
    # not known, and "45 minutes left" reads the same everywhere.
    seconds_left = (participant.deadline - timezone.now()).total_seconds()
    context: dict[str, Any] = {
        "panel": panel,
        "participant": participant,
        "minutes_left": max(1, math.ceil(seconds_left / 60)),
    }
    current = _step(request, panel, participant)
    if current is None:
        if panel.quiz:
            participant = _settled(participant)
            if participant.state != ParticipantState.STARTED:
                return redirect("panel-done", slug=slug)
            context["rated_characters"] = selectors.rated_characters(participant)
        context["skips_allowed"] = selectors.skips_allowed(participant)
        return render(request, "panels/start.html", {**context, "step": "ready"})
    step, form, change = current
    context.update(step=step, form=form, chosen=request.POST.getlist("characters"))
    if request.method == "POST" and request.POST.get("step") == step:
        error, result = attempt(form, change)
        if error is None:
            if step == "quiz":
                messages.info(request, _quiz_outcome(result))
            return redirect("panel-start", slug=slug)
        return render(request, "panels/start.html", {**context, "error": error}, status=REFUSED)
    return render(request, "panels/start.html", context)


@never_cache
@participant_required
@require_GET
def done(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """The end of the participant's batch: their code and the link back to the panel once
    every item is rated, the time-out page once their time is up, else how far they are.
    Arriving here settles the batch (the rating page sends them here when it is over)."""
    panel, participant = _own(request, slug)
    status, message = 200, None
    if participant.state == ParticipantState.STARTED:
        try:
            participant = services.participant_complete(participant=participant)
        except services.PanelError as refusal:
            if timezone.now() >= participant.deadline:
                participant = services.participant_time_out(participant=participant)
            elif refusal.code == "check_owed":
                return redirect("panel-check", slug=slug)
            else:
                participant, status, message = _ran_out(participant, refusal)
    return render(
        request,
        "panels/done.html",
        {
            "panel": panel,
            "participant": participant,
            "message": message,
            "completion_link": services.completion_link(participant),
            "ran_out": participant.state == ParticipantState.SCREENED_OUT
            and selectors.ran_out_of_items(participant),
        },
        status=status,
    )


def _ran_out(
    participant: Participant, not_done: services.PanelError
) -> tuple[Participant, int, str | None]:
    """Before the batch is full: screened out (paid) when the study has nothing left for
    them, else how far they are (409), nothing changed."""
    try:
        return services.participant_run_out(participant=participant), 200, None
    except services.PanelError:
        return participant, 409, not_done.message


@never_cache
@participant_required
@require_http_methods(["GET", "POST"])
def check(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """The attention check the participant owes (the rating page sends them here): one
    question, then back to the rating page, or to their end page once the checks they
    failed end the batch. A post is recorded once; a refused one shows the check again."""
    panel, participant = _own(request, slug)
    if participant.state != ParticipantState.STARTED or timezone.now() >= participant.deadline:
        return redirect("panel-done", slug=slug)
    error = None
    if request.method == "POST":
        form = forms.CheckAnswerForm(request.POST)
        error, answered = attempt(
            form,
            lambda cleaned: services.check_answer(
                participant=participant,
                position=cleaned["position"],
                check_key=cleaned["check"],
                chosen=cleaned["choice"],
            ),
        )
        if error is None:
            ended = answered.state != ParticipantState.STARTED
            return redirect("panel-done", slug=slug) if ended else redirect("annotate")
    owed = selectors.check_owed(participant)
    if owed is None:
        return redirect("annotate")
    position, question = owed
    language = get_language()
    context = {
        "panel": panel,
        "position": position,
        "check": question,
        "prompt": question.prompt(language),
        "choices": question.labelled_choices(language),
        "error": error,
    }
    return render(request, "panels/check.html", context, status=REFUSED if error else 200)
