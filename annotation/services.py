"""Writes of the annotation domain. Views, commands and tasks call these; they hold the
rules. Every write that must be all-or-nothing runs in one transaction here."""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from dialogues.models import Answer, Character, Source

from .models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    HumanGuess,
    Item,
    ItemAnswer,
    ItemKind,
    Judgment,
    Metric,
    Preference,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Rating,
    ScreeningQuestion,
    Study,
    StudyStatus,
    WorkerHeartbeat,
)
from .roles import RESEARCHERS_GROUP

MAX_QUIZ_ATTEMPTS = 2
QUIZ_LENGTH = 5
POSITIONS = "abcdefgh"


class AnnotationError(Exception):
    """A request the rules refuse. `code` is stable for tests and clients; the message is
    translated for the annotator."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)


# Accounts ------------------------------------------------------------------------------


def worker_heartbeat_record(*, hostname: str) -> WorkerHeartbeat:
    heartbeat, _created = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
    return heartbeat


@transaction.atomic
def account_ensure(
    *,
    email: str,
    password: str,
    staff: bool = False,
    superuser: bool = False,
    researcher: bool = False,
):
    """Create or refresh a ready-to-use account whose email address is verified."""
    from allauth.account.models import EmailAddress

    user_model = get_user_model()
    user = user_model.objects.filter(email__iexact=email).first()
    if user is None:
        user = user_model(username=email.split("@")[0], email=email)
    user.is_staff = staff or superuser
    user.is_superuser = superuser
    user.set_password(password)
    user.save()
    EmailAddress.objects.update_or_create(
        user=user, email=email, defaults={"verified": True, "primary": True}
    )
    if researcher:
        group, _created = Group.objects.get_or_create(name=RESEARCHERS_GROUP)
        user.groups.add(group)
    return user


# Screening -----------------------------------------------------------------------------


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


# Studies -------------------------------------------------------------------------------


@transaction.atomic
def study_create(
    *,
    name: str,
    reference: Source,
    compared: list[Source],
    characters: list[Character],
    rounds: tuple[int, ...] = (1, 2),
    overlap: int = 3,
    include_diversity: bool = False,
    ask_human_guess: bool = False,
    **options,
) -> Study:
    if reference in compared:
        raise AnnotationError("reference_compared", "the reference source cannot also be compared")
    base = slugify(name) or "study"
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    study = Study.objects.create(
        slug=slug,
        name=name,
        reference_source=reference,
        rounds=sorted(set(rounds)),
        overlap=overlap,
        include_diversity=include_diversity,
        ask_human_guess=ask_human_guess,
        **options,
    )
    study.compared_sources.set(compared)
    study.characters.set(characters)
    return study


@transaction.atomic
def study_open(*, study: Study) -> int:
    """Open a study, generating its items on first opening. Returns the item count."""
    locked = Study.objects.select_for_update().get(pk=study.pk)
    if not locked.items.exists():
        _generate_items(locked)
    locked.status = StudyStatus.OPEN
    locked.save(update_fields=["status"])
    study.status = locked.status
    return locked.items.count()


def _generate_items(study: Study) -> None:
    character_ids = list(study.characters.values_list("pk", flat=True))
    scenario_ids = list(study.scenarios.values_list("pk", flat=True))
    compared_ids = list(study.compared_sources.values_list("pk", flat=True))
    answers = Answer.objects.filter(
        character_id__in=character_ids,
        round__in=study.rounds,
        source_id__in=[study.reference_source_id, *compared_ids],
    )
    if scenario_ids:
        answers = answers.filter(scenario_id__in=scenario_ids)
    by_cell = {}
    for answer_id, character_id, scenario_id, round_, source_id in answers.values_list(
        "pk", "character_id", "scenario_id", "round", "source_id"
    ):
        by_cell[(character_id, scenario_id, round_, source_id)] = answer_id

    pairs = []
    for (character_id, scenario_id, round_, source_id), answer_id in sorted(by_cell.items()):
        if source_id not in compared_ids:
            continue
        reference_id = by_cell.get((character_id, scenario_id, round_, study.reference_source_id))
        if reference_id is not None:
            pairs.append((character_id, scenario_id, round_, reference_id, answer_id))
    items = Item.objects.bulk_create(
        Item(study=study, kind=ItemKind.PAIR, character_id=c, scenario_id=s, round=r)
        for c, s, r, _ref, _cmp in pairs
    )
    slots = []
    for item, (_c, _s, _r, reference_id, compared_id) in zip(items, pairs, strict=True):
        slots.append(ItemAnswer(item=item, answer_id=reference_id, slot=0))
        slots.append(ItemAnswer(item=item, answer_id=compared_id, slot=1))

    if study.include_diversity:
        rng = random.Random(study.pk)
        round_1 = {}
        for (character_id, _scenario_id, round_, source_id), answer_id in sorted(by_cell.items()):
            if round_ == 1:
                round_1.setdefault((source_id, character_id), []).append(answer_id)
        groups = [
            rng.sample(ids, study.diversity_set_size)
            for ids in round_1.values()
            if len(ids) >= study.diversity_set_size
        ]
        keys = [key for key, ids in round_1.items() if len(ids) >= study.diversity_set_size]
        diversity_items = Item.objects.bulk_create(
            Item(study=study, kind=ItemKind.DIVERSITY, character_id=c) for _s, c in keys
        )
        for item, answer_ids in zip(diversity_items, groups, strict=True):
            slots.extend(
                ItemAnswer(item=item, answer_id=a, slot=i) for i, a in enumerate(answer_ids)
            )
    ItemAnswer.objects.bulk_create(slots, batch_size=5000)


# Assignment ----------------------------------------------------------------------------


def _approved_character_ids(user) -> list[int]:
    return list(
        Qualification.objects.filter(
            profile__user=user,
            profile__status=ProfileStatus.APPROVED,
            status=QualificationStatus.APPROVED,
        ).values_list("character_id", flat=True)
    )


@transaction.atomic
def assignment_next(*, user) -> Assignment | None:
    """The annotator's current lease, or a new one on the item that most needs them.

    Only open studies, only approved characters, never an item the annotator already
    judged or skipped, and never more leases plus judgments on an item than the overlap.
    """
    now = timezone.now()
    current = (
        Assignment.objects.filter(
            annotator=user,
            state=AssignmentState.ACTIVE,
            expires_at__gt=now,
            item__study__status=StudyStatus.OPEN,
        )
        .select_related("item__study")
        .order_by("served_at")
        .first()
    )
    if current is not None:
        return current
    character_ids = _approved_character_ids(user)
    if not character_ids:
        return None
    Assignment.objects.filter(state=AssignmentState.ACTIVE, expires_at__lte=now).update(
        state=AssignmentState.EXPIRED
    )
    seen = Assignment.objects.filter(annotator=user).exclude(state=AssignmentState.EXPIRED)
    candidates = (
        Item.objects.filter(study__status=StudyStatus.OPEN, character_id__in=character_ids)
        .exclude(pk__in=seen.values("item_id"))
        .annotate(leases=Count("assignments", filter=Q(assignments__state=AssignmentState.ACTIVE)))
        .filter(judgment_count__lt=F("study__overlap"))
        .filter(leases__lt=F("study__overlap") - F("judgment_count"))
        # Finish items before starting new ones, so complete items appear early.
        .order_by("-judgment_count", "?")
        .values_list("pk", flat=True)[:20]
    )
    for item_id in candidates:
        item = (
            Item.objects.select_for_update(skip_locked=True)
            .select_related("study")
            .filter(pk=item_id)
            .first()
        )
        if item is None:
            continue
        active = item.assignments.filter(state=AssignmentState.ACTIVE).count()
        if item.judgment_count + active >= item.study.overlap:
            continue
        slots = list(item.slots.values_list("slot", flat=True))
        random.shuffle(slots)
        defaults = {
            "state": AssignmentState.ACTIVE,
            "display_order": slots,
            "served_at": now,
            "expires_at": now + timedelta(minutes=item.study.lease_minutes),
        }
        assignment, _created = Assignment.objects.update_or_create(
            item=item, annotator=user, defaults=defaults
        )
        return assignment
    return None


@transaction.atomic
def assignment_skip(*, user, token: str, reason: str) -> Assignment:
    assignment = _active_assignment_for_update(user=user, token=token)
    reason = reason.strip()
    if not reason:
        raise AnnotationError("skip_reason", _("Please say why you skip this item."))
    assignment.state = AssignmentState.SKIPPED
    assignment.skip_reason = reason[:200]
    assignment.save(update_fields=["state", "skip_reason"])
    return assignment


def assignment_check_active(*, user, token: str) -> Assignment:
    """The live lease behind `token`, or AnnotationError saying why it is not live."""
    with transaction.atomic():
        return _active_assignment_for_update(user=user, token=token)


def _active_assignment_for_update(*, user, token: str) -> Assignment:
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("item__study")
        .filter(token=token, annotator=user)
        .first()
    )
    if assignment is None:
        raise AnnotationError("not_yours", _("This item is not assigned to you."))
    if assignment.state == AssignmentState.SUBMITTED:
        raise AnnotationError("already_submitted", _("You have already submitted this item."))
    if assignment.state == AssignmentState.SKIPPED:
        raise AnnotationError("skipped", _("You skipped this item."))
    if assignment.state == AssignmentState.EXPIRED or assignment.expires_at <= timezone.now():
        raise AnnotationError(
            "lease_expired",
            _("Your time for this item ran out and it went back to the pool. Nothing was saved."),
        )
    if assignment.item.study.status != StudyStatus.OPEN:
        raise AnnotationError("study_closed", _("This study is not open any more."))
    return assignment


# Judgments -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    """What the rating form sends, in display positions ('a', 'b', …) only."""

    ratings: dict[tuple[str, str], int]  # (position or "set", metric slug) -> 1..5
    preference: str = ""
    human_guess: str = ""
    comment: str = ""


def judgment_submit(*, user, token: str, submission: Submission) -> Judgment:
    """Record a judgment and its ratings atomically, or raise AnnotationError and write
    nothing. A replay of an accepted submission raises `already_submitted`."""
    try:
        with transaction.atomic():
            return _judgment_submit(user=user, token=token, submission=submission)
    except IntegrityError:
        # Two requests for the same lease raced; the database kept exactly one.
        raise AnnotationError(
            "already_submitted", _("You have already submitted this item.")
        ) from None


def _judgment_submit(*, user, token: str, submission: Submission) -> Judgment:
    assignment = _active_assignment_for_update(user=user, token=token)
    item = assignment.item
    slot_answers = dict(item.slots.values_list("slot", "answer_id"))
    position_answer = {
        POSITIONS[i]: slot_answers[slot] for i, slot in enumerate(assignment.display_order)
    }
    if item.kind == ItemKind.PAIR:
        metrics = list(Metric.objects.filter(for_diversity=False))
        expected = {(position, m.slug) for position in position_answer for m in metrics}
    else:
        metrics = list(Metric.objects.filter(for_diversity=True))
        expected = {("set", m.slug) for m in metrics}
    _check_ratings(submission.ratings, expected)

    preferred, is_tie = None, False
    guess, guess_asked = None, False
    if item.kind == ItemKind.PAIR:
        if submission.preference not in Preference.values:
            raise AnnotationError("preference", _("Choose which answer you prefer, or a tie."))
        is_tie = submission.preference == Preference.TIE
        preferred = None if is_tie else position_answer[submission.preference]
        if item.study.ask_human_guess:
            guess_asked = True
            if submission.human_guess not in HumanGuess.values:
                raise AnnotationError(
                    "human_guess", _("Say which answer you think a fan wrote, or 'not sure'.")
                )
            guess = position_answer.get(submission.human_guess)

    now = timezone.now()
    judgment = Judgment.objects.create(
        item=item,
        annotator=user,
        assignment=assignment,
        submitted_at=now,
        seconds_on_task=(now - assignment.served_at).total_seconds(),
        preferred_answer_id=preferred,
        is_tie=is_tie,
        human_guess_id=guess,
        human_guess_asked=guess_asked,
        comment=submission.comment.strip()[:2000],
    )
    metric_ids = {m.slug: m.pk for m in metrics}
    Rating.objects.bulk_create(
        Rating(
            judgment=judgment,
            answer_id=None if position == "set" else position_answer[position],
            metric_id=metric_ids[slug],
            value=value,
        )
        for (position, slug), value in submission.ratings.items()
    )
    assignment.state = AssignmentState.SUBMITTED
    assignment.save(update_fields=["state"])
    Item.objects.filter(pk=item.pk).update(judgment_count=F("judgment_count") + 1)
    return judgment


def _check_ratings(ratings: dict[tuple[str, str], int], expected: set[tuple[str, str]]) -> None:
    unknown = set(ratings) - expected
    if unknown:
        raise AnnotationError(
            "unknown_rating", _("The form contained ratings this item does not have.")
        )
    if set(ratings) != expected:
        raise AnnotationError("missing_rating", _("Please rate every metric for every answer."))
    for value in ratings.values():
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
            raise AnnotationError("out_of_range", _("Ratings must be whole numbers from 1 to 5."))
