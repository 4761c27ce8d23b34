"""Consent, character claims, quizzes and staff review."""

import random

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from dialogues.models import Character

from ..models import (
    AnnotatorProfile,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    ScreeningQuestion,
    Study,
    StudyStatus,
)
from .errors import AnnotationError

MAX_QUIZ_ATTEMPTS = 2
QUIZ_LENGTH = 5


def profile_get_or_create(*, user) -> AnnotatorProfile:
    profile, _created = AnnotatorProfile.objects.get_or_create(user=user)
    return profile


@transaction.atomic
def consent_give(*, user) -> AnnotatorProfile:
    profile = profile_get_or_create(user=user)
    if profile.consented_at is None:
        profile.consented_at = timezone.now()
        profile.save(update_fields=["consented_at"])
    return profile


@transaction.atomic
def characters_claim(*, user, characters: list[Character]) -> AnnotatorProfile:
    """Record which characters the annotator knows well. Claims already quizzed or
    reviewed stay; untouched claims that were unticked are dropped."""
    profile = profile_get_or_create(user=user)
    if profile.consented_at is None:
        raise AnnotationError("no_consent", _("Please give your consent first."))
    if not characters:
        raise AnnotationError("no_characters", _("Choose at least one character you know well."))
    wanted = {character.pk for character in characters}
    profile.qualifications.filter(status=QualificationStatus.CLAIMED).exclude(
        character_id__in=wanted
    ).delete()
    existing = set(profile.qualifications.values_list("character_id", flat=True))
    Qualification.objects.bulk_create(
        Qualification(profile=profile, character_id=pk) for pk in wanted - existing
    )
    if profile.status == ProfileStatus.APPLIED:
        profile.status = ProfileStatus.SCREENING
        profile.save(update_fields=["status"])
    return profile


def screening_pass_mark(character: Character) -> float:
    """The strictest pass mark among the open studies that include the character."""
    marks = Study.objects.filter(
        characters=character, status__in=[StudyStatus.OPEN, StudyStatus.DRAFT]
    ).values_list("screening_pass_mark", flat=True)
    return max(marks, default=0.8)


def quiz_questions(*, qualification: Qualification) -> list[ScreeningQuestion]:
    """The same questions for the same attempt, so that a reload does not reshuffle."""
    questions = list(
        ScreeningQuestion.objects.filter(character=qualification.character, active=True)
    )
    rng = random.Random(f"{qualification.pk}-{qualification.quiz_attempts}")
    rng.shuffle(questions)
    return questions[:QUIZ_LENGTH]


@transaction.atomic
def quiz_submit(
    *, user, character: Character, choices: dict[int, int], roleplay_sample: str = ""
) -> Qualification:
    """Score a quiz attempt. `choices` maps question id to the chosen index."""
    qualification = (
        Qualification.objects.select_for_update()
        .filter(profile__user=user, character=character)
        .first()
    )
    if qualification is None:
        raise AnnotationError("not_claimed", _("You have not said you know this character."))
    if qualification.status not in (QualificationStatus.CLAIMED, QualificationStatus.FAILED):
        raise AnnotationError(
            "quiz_done", _("You have already passed the quiz for this character.")
        )
    if qualification.quiz_attempts >= MAX_QUIZ_ATTEMPTS:
        raise AnnotationError(
            "no_attempts_left", _("No quiz attempts are left for this character.")
        )
    questions = quiz_questions(qualification=qualification)
    if not questions:
        raise AnnotationError("no_questions", _("There is no quiz for this character yet."))
    missing = [q for q in questions if q.pk not in choices]
    if missing:
        raise AnnotationError("incomplete_quiz", _("Please answer every question."))
    correct = sum(1 for q in questions if choices[q.pk] == q.correct_choice)
    qualification.quiz_score = correct / len(questions)
    qualification.quiz_attempts += 1
    qualification.roleplay_sample = roleplay_sample.strip()[:2000]
    passed = qualification.quiz_score >= screening_pass_mark(character)
    qualification.status = QualificationStatus.PASSED if passed else QualificationStatus.FAILED
    qualification.save()
    return qualification


@transaction.atomic
def qualification_review(*, qualification: Qualification, reviewer, approve: bool, note: str = ""):
    qualification.status = QualificationStatus.APPROVED if approve else QualificationStatus.REJECTED
    qualification.reviewed_by = reviewer
    qualification.reviewed_at = timezone.now()
    qualification.review_note = note
    qualification.save()
    profile = qualification.profile
    if approve and profile.status in (
        ProfileStatus.APPLIED,
        ProfileStatus.SCREENING,
        ProfileStatus.REJECTED,
    ):
        profile.status = ProfileStatus.APPROVED
        profile.save(update_fields=["status"])
    elif (
        not approve
        and not profile.qualifications.filter(
            status__in=[
                QualificationStatus.APPROVED,
                QualificationStatus.PASSED,
                QualificationStatus.CLAIMED,
            ]
        ).exists()
    ):
        profile.status = ProfileStatus.REJECTED
        profile.save(update_fields=["status"])
    return qualification
