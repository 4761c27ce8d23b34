"""A participant's screening on a study with the character quiz, and the screen-out that
ends a batch with the panel's (paid) screen-out code.

The quiz is annotation's own (its question bank, its draw of questions, its scoring and
pass mark); what the panel changes is who decides and how often: one attempt per
character, and the characters passed are admitted at once, by the platform, with no
staff step (the study's panel settings say so). Failing every chosen character, or the
study running out of items before the batch is full, screens the participant out: the
panel pays that, so it ends with its own code, never a dead end."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation import services as annotation
from annotation.models import AuditAction, QualificationStatus, ScreeningQuestion
from annotation.services import audit
from dialogues.models import Character

from .. import selectors
from ..models import PanelStudy, Participant, ParticipantState
from .batch import judgments_given
from .errors import PanelError
from .locks import participant_locked

QUIZ_ADMIT_NOTE = "panel participant: quiz passed at the one attempt (the study's panel settings)"
QUIZ_FAILED_NOTE = "panel participant: quiz not passed at the one attempt a participant has"
# What the audit trail says ended the batch (the outcome, for people reading the trail).
SCREENED_OUT_BY_QUIZ = "screen-out: no chosen character's quiz passed"
SCREENED_OUT_NO_ITEMS = (
    "screen-out: the study ran out of items for the participant (%d of %d rated)"
)


def quiz_characters(panel_study: PanelStudy):
    """The study's characters a participant can be screened for: those with questions in
    annotation's bank (the same rule its own applicants are held to)."""
    return panel_study.study.characters.filter(
        pk__in=annotation.characters_with_quiz_ids()
    ).order_by("pk")


def quiz_next(participant: Participant) -> tuple[Character, list[ScreeningQuestion]] | None:
    """The next chosen character whose quiz is still to be taken, with its questions as
    annotation draws them (the same ones on a reload); None when none is left."""
    for qualification in selectors.screening_of(participant):
        if selectors.quiz_untaken(qualification):
            return qualification.character, annotation.quiz_questions(qualification=qualification)
    return None


def _still_screening(locked: Participant) -> None:
    """Refuse unless the participant is on a quiz study, not finished, in time and not
    admitted yet."""
    if not locked.panel_study.quiz:
        raise PanelError("no_quiz", _("This study has no character quiz."))
    if locked.state != ParticipantState.STARTED:
        raise PanelError("finished", _("Your part of this study is over."))
    if timezone.now() >= locked.deadline:
        raise PanelError("timed_out", _("Your time for this study is up."))
    if selectors.participant_admitted(locked):
        raise PanelError("already_admitted", _("Your quizzes are over: you may rate now."))


@transaction.atomic
def participant_characters_choose(*, participant: Participant, characters) -> Participant:
    """The characters a participant on a quiz study says they know, each to be quizzed
    once: only the study's characters with a quiz, and only once."""
    locked = participant_locked(participant)
    _still_screening(locked)
    if selectors.screening_of(locked):
        raise PanelError("already_chosen", _("You have already chosen your characters."))
    characters = list(characters or [])
    if not characters:
        raise PanelError("characters", _("Choose at least one character you know."))
    allowed = set(quiz_characters(locked.panel_study).values_list("pk", flat=True))
    if any(character.pk not in allowed for character in characters):
        raise PanelError("characters", _("Choose characters of this study only."))
    try:
        annotation.characters_claim(user=locked.user, characters=characters)
    except annotation.AnnotationError as refusal:
        raise PanelError(refusal.code, refusal.message) from refusal
    return locked


@transaction.atomic
def participant_quiz_submit(*, participant: Participant, character: Character, choices: dict):
    """Score the participant's one attempt at `character`'s quiz (`choices`: question id
    to the index chosen), with annotation's scoring and pass mark. A quiz not passed is
    rejected at once, so it cannot be taken again anywhere; after the last quiz, the
    characters passed are admitted or, with none passed, the participant is screened out.
    Returns the scored qualification."""
    locked = participant_locked(participant)
    _still_screening(locked)
    qualification = next(
        (q for q in selectors.screening_of(locked) if q.character_id == character.pk), None
    )
    if qualification is None:
        raise PanelError("not_chosen", _("Take the quizzes of the characters you chose only."))
    if not selectors.quiz_untaken(qualification):
        raise PanelError(
            "quiz_taken",
            _("You have taken this character's quiz: there is one attempt per character."),
        )
    try:
        scored = annotation.quiz_submit(user=locked.user, character=character, choices=choices)
        if scored.status == QualificationStatus.FAILED:
            annotation.qualification_review(
                qualification=scored, reviewer=None, approve=False, note=QUIZ_FAILED_NOTE
            )
    except annotation.AnnotationError as refusal:
        raise PanelError(refusal.code, refusal.message) from refusal
    _settle(locked)
    return scored


@transaction.atomic
def participant_screening_settle(*, participant: Participant) -> Participant:
    """Once every chosen character's quiz is taken: admit the characters passed, or
    screen the participant out. Called after each quiz; called again (the start page),
    it settles a screening whose last quiz was taken on another page, and returns a
    participant already admitted or finished as they are."""
    locked = participant_locked(participant)
    if locked.state != ParticipantState.STARTED or selectors.participant_admitted(locked):
        return locked
    _still_screening(locked)
    if not selectors.screening_of(locked):
        raise PanelError("characters", _("Choose at least one character you know."))
    _settle(locked)
    return locked


def _settle(locked: Participant) -> None:
    chosen = selectors.screening_of(locked)
    if any(selectors.quiz_untaken(qualification) for qualification in chosen):
        return
    # Only a pass at the first attempt counts: annotation's own quiz page allows a second
    # attempt, which a participant must not get by going there.
    passed = [
        q.character
        for q in chosen
        if q.status == QualificationStatus.PASSED and q.quiz_attempts == 1
    ]
    if not passed:
        _screen_out(locked, note=SCREENED_OUT_BY_QUIZ)
        return
    panel = locked.panel_study
    try:
        annotation.annotator_admit(
            annotator=locked.user,
            characters=passed,
            actor=None,
            members_only=True,
            note=QUIZ_ADMIT_NOTE,
        )
        annotation.membership_add(
            study=panel.study,
            annotator=locked.user,
            actor=None,
            cap=panel.items_per_participant,
            skips_allowed=panel.skips_per_participant,
            characters=passed,
        )
    except annotation.AnnotationError as refusal:
        raise PanelError(refusal.code, refusal.message) from refusal


@transaction.atomic
def participant_run_out(*, participant: Participant) -> Participant:
    """Screen out (paid) a participant whose study has no item left for them before their
    batch is full (`selectors.items_left_for` says what "left" means). Refused, changing
    nothing, while an item may still come to them; a participant already screened out
    is returned with the same code."""
    locked = participant_locked(participant)
    if locked.state == ParticipantState.SCREENED_OUT:
        return locked
    if locked.state != ParticipantState.STARTED:
        raise PanelError("finished", _("Your part of this study is over."))
    if timezone.now() >= locked.deadline:
        raise PanelError("timed_out", _("Your time for this study is up."))
    if not selectors.participant_admitted(locked):
        raise PanelError("not_admitted", _("You have not been given any items yet."))
    wanted = locked.panel_study.items_per_participant
    given = judgments_given(locked)
    if given >= wanted:
        raise PanelError("batch_full", _("Your batch is full: your completion code is due."))
    if selectors.items_left_for(locked):
        raise PanelError("items_left", _("There are still items for you to rate."))
    _screen_out(locked, note=SCREENED_OUT_NO_ITEMS % (given, wanted))
    return locked


def _screen_out(locked: Participant, *, note: str) -> None:
    """End the batch with the screen-out code (once: the state says it was given), free
    any lease and record the outcome as the platform's."""
    panel = locked.panel_study
    annotation.annotator_leases_release(annotator=locked.user)
    locked.state = ParticipantState.SCREENED_OUT
    locked.code = panel.screen_out_code
    locked.finished_at = timezone.now()
    locked.save(update_fields=["state", "code", "finished_at"])
    audit.record(
        actor=None,
        action=AuditAction.PANEL_OUTCOME,
        target=locked,
        target_label=locked.user.annotator_profile.pseudonym,
        study=panel.study,
        before={"state": ParticipantState.STARTED.value},
        after={"state": ParticipantState.SCREENED_OUT.value},
        note=note,
    )
