"""Becoming an annotator: consent, the characters one knows, a quiz for each."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods

from common.parsing import whole_number, whole_numbers
from common.typing import AuthenticatedRequest
from dialogues.models import Character

from .. import selectors, services
from ..models import Qualification, QualificationStatus


@login_required
@require_GET
def hub(request: AuthenticatedRequest) -> HttpResponse:
    step = selectors.annotator_step(request.user)
    if step == selectors.Step.CONSENT:
        return redirect("screening-consent")
    if step == selectors.Step.CHARACTERS:
        return redirect("screening-characters")
    return render(
        request,
        "annotation/screening.html",
        {
            "step": step,
            "qualifications": selectors.qualifications_of(request.user),
            "with_quiz": services.characters_with_quiz_ids(),
            "max_attempts": services.MAX_QUIZ_ATTEMPTS,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def consent(request: AuthenticatedRequest) -> HttpResponse:
    if request.method == "POST":
        if request.POST.get("agree") != "yes":
            messages.error(
                request, _("Please tick the box to give your consent, or leave this page.")
            )
            return render(request, "annotation/consent.html", status=422)
        services.consent_give(user=request.user, language=request.LANGUAGE_CODE)
        return redirect("screening-characters")
    return render(request, "annotation/consent.html")


@login_required
@require_http_methods(["GET", "POST"])
def characters(request: AuthenticatedRequest) -> HttpResponse:
    if selectors.annotator_step(request.user) == selectors.Step.CONSENT:
        return redirect("screening-consent")
    all_characters = list(Character.objects.order_by("work_zh", "name_zh"))
    claimed = {q.character_id for q in selectors.qualifications_of(request.user)}
    context = {
        "characters": all_characters,
        "claimed": claimed,
        "with_quiz": services.characters_with_quiz_ids(),
    }
    if request.method == "POST":
        ids = set(whole_numbers(request.POST.getlist("character")))
        chosen = [c for c in all_characters if c.pk in ids]
        try:
            services.characters_claim(user=request.user, characters=chosen)
        except services.AnnotationError as refusal:
            messages.error(request, refusal.message)
            return render(request, "annotation/characters.html", context, status=422)
        return redirect("screening")
    return render(request, "annotation/characters.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def quiz(request: AuthenticatedRequest, character_id: int) -> HttpResponse:
    character = get_object_or_404(Character, pk=character_id)
    qualification = get_object_or_404(
        Qualification, profile__user=request.user, character=character
    )
    if qualification.status not in (QualificationStatus.CLAIMED, QualificationStatus.FAILED):
        return redirect("screening")
    if qualification.quiz_attempts >= services.MAX_QUIZ_ATTEMPTS:
        # A quiz that cannot be submitted is not shown: the answers would be refused.
        messages.error(request, _("No quiz attempts are left for this character."))
        return redirect("screening")
    questions = services.quiz_questions(qualification=qualification)
    context = {
        "character": character,
        "qualification": qualification,
        "questions": questions,
        "attempts_left": services.MAX_QUIZ_ATTEMPTS - qualification.quiz_attempts,
        "pass_mark": round(100 * services.screening_pass_mark(character)),
    }
    if request.method == "POST":
        choices = {}
        for question in questions:
            choice = whole_number(request.POST.get(f"q{question.pk}", ""))
            if choice is not None:
                choices[question.pk] = choice
        try:
            result = services.quiz_submit(
                user=request.user,
                character=character,
                choices=choices,
                roleplay_sample=request.POST.get("roleplay_sample", ""),
                attempt=whole_number(request.POST.get("attempt", "")),
            )
        except services.AnnotationError as refusal:
            if refusal.code == "quiz_already_sent":
                # Sent twice: the first one counted, and its result is on the hub.
                messages.info(request, refusal.message)
                return redirect("screening")
            messages.error(request, refusal.message)
            # Refused (an answer missing, where the browser's own check did not run): the
            # quiz comes back as it was filled in, to finish rather than start again.
            context["chosen"] = choices
            context["sample"] = request.POST.get("roleplay_sample", "")
            return render(request, "annotation/quiz.html", context, status=422)
        messages.add_message(
            request,
            messages.SUCCESS if result.status == QualificationStatus.PASSED else messages.ERROR,
            quiz_result_message(result),
        )
        return redirect("screening")
    return render(request, "annotation/quiz.html", context)


def quiz_result_message(result: Qualification) -> str:
    """What the applicant needs to know after an attempt: their score against the pass
    mark, and what happens next."""
    # An attempt was just scored by `quiz_submit`: only an untried application has none.
    assert result.quiz_score is not None
    figures = {
        "score": round(100 * result.quiz_score),
        "mark": round(100 * services.screening_pass_mark(result.character)),
    }
    if result.status == QualificationStatus.PASSED:
        return (
            _("Quiz passed: you scored %(score)d%%; the pass mark is %(mark)d%%.") % figures
            + " "
            + _("Staff will review your application soon.")
        )
    left = max(services.MAX_QUIZ_ATTEMPTS - result.quiz_attempts, 0)
    outcome = _("Not passed this time: you scored %(score)d%%; the pass mark is %(mark)d%%.")
    if left:
        then = ngettext(
            "You have %(left)d attempt left, with different questions where possible.",
            "You have %(left)d attempts left, with different questions where possible.",
            left,
        ) % {"left": left}
    else:
        then = _("No attempts are left for this character.")
    return outcome % figures + " " + then
