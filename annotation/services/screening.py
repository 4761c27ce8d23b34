"""Consent, character claims, quizzes and staff review."""

import random

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from common.text import plain_text
from dialogues.models import Character

from ..models import (
    AnnotatorProfile,
    AuditAction,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    ScreeningQuestion,
    Study,
    StudyStatus,
)
from ..selectors.staffing import staffing_changed
from .errors import AnnotationError

MAX_QUIZ_ATTEMPTS = 2
QUIZ_LENGTH = 5


def profile_get_or_create(*, user) -> AnnotatorProfile:
    profile, _created = AnnotatorProfile.objects.get_or_create(user=user)
    return profile


@transaction.atomic
def consent_give(*, user, language: str = "") -> AnnotatorProfile:
    """Record consent, once, and the language the annotator reads the site in (one of the
    site's languages; anything else is not kept)."""
    profile = profile_get_or_create(user=user)
    changed = []
    if profile.consented_at is None:
        profile.consented_at = timezone.now()
        changed.append("consented_at")
    if language in dict(settings.LANGUAGES) and language != profile.language:
        profile.language = language
        changed.append("language")
    if changed:
        profile.save(update_fields=changed)
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
    if wanted - characters_with_quiz_ids():
        # Without a quiz the claim could never be reviewed: refuse it rather than leave
        # the applicant waiting for nothing.
        raise AnnotationError(
            "no_quiz",
            _(
                "A character you chose has no quiz yet, so you cannot qualify for it; nothing was saved."
            ),
        )
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
    """The questions of the applicant's current attempt. The pool has one fixed order per
    applicant and each attempt takes the next QUIZ_LENGTH questions of it, so a retry asks
    the questions not seen yet first; the same attempt always gets the same questions, so
    that a reload does not reshuffle."""
    pool = list(
        ScreeningQuestion.objects.filter(character=qualification.character, active=True).order_by(
            "pk"
        )
    )
    if not pool:
        return []
    random.Random(f"{qualification.pk}").shuffle(pool)
    start = (qualification.quiz_attempts * QUIZ_LENGTH) % len(pool)
    drawn = (pool[start:] + pool[:start])[:QUIZ_LENGTH]
    random.Random(f"{qualification.pk}-{qualification.quiz_attempts}").shuffle(drawn)
    return drawn


def characters_with_quiz_ids() -> set[int]:
    """Characters an applicant can qualify for: those with active quiz questions."""
    return set(ScreeningQuestion.objects.filter(active=True).values_list("character_id", flat=True))


@transaction.atomic
def quiz_submit(
    *,
    user,
    character: Character,
    choices: dict[int, int],
    roleplay_sample: str = "",
    attempt: int | None = None,
) -> Qualification:
    """Score a quiz attempt. `choices` maps question id to the chosen index. `attempt`,
    the number of attempts made when the quiz was shown (the form says it): answers to
    an attempt already scored (a double click, a second tab) are refused rather than
    scored again, which could spend the last attempt on the questions of the first."""
    qualification = (
        Qualification.objects.select_for_update()
        .filter(profile__user=user, character=character)
        .first()
    )
    if qualification is None:
        raise AnnotationError("not_claimed", _("You have not said you know this character."))
    # A second sending of the attempt that passed goes to its result too.
    if attempt is not None and attempt != qualification.quiz_attempts:
        raise AnnotationError(
            "quiz_already_sent",
            _("These answers were already sent and scored; your result is below."),
        )
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
    qualification.roleplay_sample = plain_text(roleplay_sample, 2000)
    passed = qualification.quiz_score >= screening_pass_mark(character)
    qualification.status = QualificationStatus.PASSED if passed else QualificationStatus.FAILED
    qualification.save()
    return qualification


REVIEWABLE = (
    QualificationStatus.PASSED,
    QualificationStatus.FAILED,
    QualificationStatus.APPROVED,
    QualificationStatus.REJECTED,
)


def qualification_review(*, qualification: Qualification, reviewer, approve: bool, note: str = ""):
    """Approve or reject one annotator for one character; see `qualifications_review`."""
    return qualifications_review(
        qualifications=[qualification], reviewer=reviewer, approve=approve, note=note
    )[0]


@transaction.atomic
def qualifications_review(
    *,
    qualifications: list[Qualification],
    reviewer,
    approve: bool,
    note: str = "",
    site_url: str = "",
) -> list[Qualification]:
    """Staff decide on applications, all or none: a claim whose quiz was never taken has
    nothing to review and refuses the whole batch. Each decision is audited, and each
    annotator gets one email listing their decisions once the transaction commits, its
    link on `site_url` (`common.site.site_url` of the staff member's request; empty:
    CHATANIME_SITE_URL)."""
    if not qualifications:
        raise AnnotationError("nothing_chosen", _("Choose at least one application."))
    locked = {
        q.pk: q
        for q in Qualification.objects.select_for_update()
        .select_related("profile__user", "character")
        .filter(pk__in=[q.pk for q in qualifications])
    }
    if len(locked) != len({q.pk for q in qualifications}):
        raise AnnotationError("unknown_application", _("Some of these applications do not exist."))
    if any(q.status not in REVIEWABLE for q in locked.values()):
        raise AnnotationError(
            "not_reviewable",
            _("An applicant has not taken the quiz for that character yet; nothing was changed."),
        )
    note = plain_text(note)
    reviewed = []
    for original in qualifications:
        qualification = locked[original.pk]
        _review_one(qualification, reviewer=reviewer, approve=approve, note=note)
        # The caller's instance reflects the decision too, as before this took batches.
        for field in ("status", "reviewed_by_id", "reviewed_at", "review_note"):
            setattr(original, field, getattr(qualification, field))
        reviewed.append(qualification)
    by_annotator = {}
    for qualification in reviewed:
        by_annotator.setdefault(qualification.profile.user, []).append(qualification)
    for user, decided in by_annotator.items():
        transaction.on_commit(
            lambda user=user, decided=decided: _notify_decision(user, decided, site_url),
            robust=True,
        )
    return [locked[q.pk] for q in qualifications]


@transaction.atomic
def annotator_admit(
    *, annotator, characters, actor, members_only=False, note=""
) -> AnnotatorProfile:
    """Approve a consenting annotator for `characters` without a quiz or a staff review,
    where the place they come from decides so itself (a paid panel whose study asks its
    participants only to choose characters): the same decision as a staff approval
    (`_review_one`), by `actor` (None: the platform). `members_only`: they will rate only
    the studies they are a member of."""
    profile = AnnotatorProfile.objects.select_for_update().filter(user=annotator).first()
    if profile is None:
        raise AnnotationError("not_annotator", _("This account is not an annotator."))
    if profile.consented_at is None:
        raise AnnotationError("no_consent", _("Please give your consent first."))
    if profile.status in (ProfileStatus.SUSPENDED, ProfileStatus.REJECTED):
        raise AnnotationError("not_admissible", _("This annotator cannot be admitted."))
    wanted = {character.pk: character for character in characters or []}
    if not wanted:
        raise AnnotationError("no_characters", _("Choose at least one character you know well."))
    note = plain_text(note)
    _approve_all(profile, [wanted[pk] for pk in sorted(wanted)], reviewer=actor, note=note)
    if members_only and not profile.members_only:
        profile.members_only = True
        profile.save(update_fields=["members_only"])
    return profile


def _approve_all(profile: AnnotatorProfile, characters: list[Character], *, reviewer, note: str):
    """`_review_one`'s approval for every one of `characters` at once, in a number of
    statements that does not grow with them: a panel's burst of arrivals admits each
    participant for as many characters as they chose. The audit trail is the one
    `_review_one` leaves, character by character. Written in bulk, the rows fire no
    save signals, so the copies those signals keep fresh (every process's staffing, the
    annotator's worklist plans) are told here."""
    from . import audit
    from .worklists import plans_forget

    now = timezone.now()
    had = {
        qualification.character_id: qualification
        for qualification in Qualification.objects.filter(profile=profile, character__in=characters)
    }
    approved = {
        "status": QualificationStatus.APPROVED,
        "reviewed_by": reviewer,
        "reviewed_at": now,
        "review_note": note,
    }
    created = Qualification.objects.bulk_create(
        [
            Qualification(profile=profile, character=character, **approved)
            for character in characters
            if character.pk not in had
        ]
    )
    Qualification.objects.filter(pk__in=[q.pk for q in had.values()]).update(**approved)
    # Both databases return the new rows' keys (RETURNING), which their audit rows name.
    by_character = {q.character_id: q for q in [*created, *had.values()]}
    profile_before = profile.status
    _approve_profile(profile)
    events = []
    for character in characters:
        previous = had.get(character.pk)
        events.append(
            audit.event_of(
                actor=reviewer,
                action=AuditAction.QUALIFICATION_APPROVE,
                target=by_character[character.pk],
                target_label=f"{profile.pseudonym} / {character.key}",
                before={
                    "status": previous.status if previous else QualificationStatus.CLAIMED,
                    "profile_status": profile_before,
                    "review_note": previous.review_note if previous else "",
                },
                after={
                    "status": QualificationStatus.APPROVED,
                    "profile_status": profile.status,
                    "review_note": note,
                },
                note=note,
            )
        )
        # `_review_one` approved one at a time: the profile was approved by the first.
        profile_before = profile.status
    audit.record_all(events)
    staffing_changed()
    plans_forget(profile.user_id)


def _approve_profile(profile: AnnotatorProfile) -> None:
    """An approved qualification approves its annotator, unless staff suspended them."""
    if profile.status in (ProfileStatus.APPLIED, ProfileStatus.SCREENING, ProfileStatus.REJECTED):
        profile.status = ProfileStatus.APPROVED
        profile.save(update_fields=["status"])


def _review_one(qualification: Qualification, *, reviewer, approve: bool, note: str) -> None:
    from . import audit

    profile = qualification.profile
    before = {
        "status": qualification.status,
        "profile_status": profile.status,
        "review_note": qualification.review_note,
    }
    qualification.status = QualificationStatus.APPROVED if approve else QualificationStatus.REJECTED
    qualification.reviewed_by = reviewer
    qualification.reviewed_at = timezone.now()
    qualification.review_note = note
    qualification.save()
    if approve:
        _approve_profile(profile)
    elif (
        not approve
        and profile.status != ProfileStatus.SUSPENDED
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
    audit.record(
        actor=reviewer,
        action=(AuditAction.QUALIFICATION_APPROVE if approve else AuditAction.QUALIFICATION_REJECT),
        target=qualification,
        target_label=f"{profile.pseudonym} / {qualification.character.key}",
        before=before,
        after={
            "status": qualification.status,
            "profile_status": profile.status,
            "review_note": note,
        },
        note=note,
    )


def _notify_decision(user, decided: list[Qualification], site_url: str = "") -> None:
    """Tell the applicant, in the language they read the site in when they consented (the
    platform's default where none was kept); the same result is on their screening page."""
    if not user.email:
        return
    language = decided[0].profile.language  # the profile the review already read
    with translation.override(language or settings.LANGUAGE_CODE):
        body = render_to_string(
            "annotation/email/screening_decision.txt",
            {
                "decisions": decided,
                "screening_url": (site_url or settings.SITE_URL).rstrip("/") + reverse("screening"),
            },
        )
        subject = _("Your ChatAnime application has been reviewed")
    send_mail(str(subject), body, None, [user.email])
