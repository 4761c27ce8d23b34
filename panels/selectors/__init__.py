"""Reads of the panels app."""

from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlencode

from django.db.models import Count, Max, OuterRef, Q, Subquery
from django.urls import reverse
from django.utils import timezone

from annotation.models import FlagKind, Judgment, QualityFlag
from common.site import site_url

from .. import checks
from ..models import (
    GONE_STATES,
    CheckAnswer,
    PanelStudy,
    Participant,
    Provider,
)

# The staff dashboard's reads live in their own module; callers find them here like the rest.
from .dashboard import DASHBOARD_STATES as DASHBOARD_STATES
from .dashboard import PanelSummary as PanelSummary
from .dashboard import panel_summary as panel_summary
from .dashboard import participants_awaiting_review as participants_awaiting_review
from .dashboard import participants_for_staff as participants_for_staff
from .dashboard import payment_rows as payment_rows


def panel_study_for_slug(slug: str) -> PanelStudy | None:
    return PanelStudy.objects.select_related("study").filter(study__slug=slug).first()


def panel_study_of_page(request) -> PanelStudy | None:
    """The panel study of the study whose staff page is being shown (its slug is in the
    page's address), if the study is open to a panel."""
    match = getattr(request, "resolver_match", None)
    slug = match.kwargs.get("slug") if match else None
    return panel_study_for_slug(slug) if slug else None


def join_link(panel, request=None) -> str:
    """The link staff paste into the panel, with the panel's own placeholders, on the
    address of the staff member's `request` unless CHATANIME_SITE_URL says otherwise."""
    base = site_url(request) + reverse("panel-join", args=[panel.study.slug])
    if panel.provider == Provider.PROLIFIC:
        # Prolific fills in {{%NAME%}}; the braces must reach it as they are.
        names = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
        return base + "?" + "&".join(f"{name}={{{{%{name}%}}}}" for name in names)
    return base + "?" + urlencode({panel.id_parameter: ""})


def pays_participants(user) -> bool:
    """Whether `user` pays participants through the panel, and so may see panel ids."""
    return bool(user.is_authenticated and user.has_perm("panels.pay_participants"))


def places_taken(panel_study: PanelStudy) -> int:
    """People holding a place: everyone who came, but those who returned or timed out."""
    return (
        Participant.objects.filter(panel_study=panel_study).exclude(state__in=GONE_STATES).count()
    )


def participant_of(user, panel_study: PanelStudy) -> Participant | None:
    """The user's participation in this panel study, if they came from it."""
    if not user.is_authenticated:
        return None
    return Participant.objects.filter(user=user, panel_study=panel_study).first()


def participant_admitted(participant: Participant) -> bool:
    """Whether the participant has chosen their characters (is a member of the study)."""
    from annotation.models import StudyMembership

    return StudyMembership.objects.filter(
        study_id=participant.panel_study.study_id, annotator_id=participant.user_id
    ).exists()


def skips_allowed(participant: Participant) -> int | None:
    """How many items the participant may skip, as set when they were admitted (a later
    change of the panel's setting is for newcomers); None for no limit."""
    from annotation.models import StudyMembership

    return (
        StudyMembership.objects.filter(
            study_id=participant.panel_study.study_id, annotator_id=participant.user_id
        )
        .values_list("skips_allowed", flat=True)
        .first()
    )


def participant_consented(participant: Participant) -> bool:
    from annotation.models import AnnotatorProfile

    return AnnotatorProfile.objects.filter(
        user_id=participant.user_id, consented_at__isnull=False
    ).exists()


def screening_of(participant: Participant) -> list:
    """The participant's qualifications for their study's characters (on a quiz study: the
    characters they chose, each with its one quiz), in the order the quizzes come."""
    from annotation.models import Qualification

    return list(
        Qualification.objects.filter(
            profile__user_id=participant.user_id,
            character__in=participant.panel_study.study.characters.all(),
        )
        .select_related("character")
        .order_by("character_id")
    )


def quiz_untaken(qualification) -> bool:
    """A chosen character whose one quiz is still to be taken."""
    from annotation.models import QualificationStatus

    return qualification.status == QualificationStatus.CLAIMED and qualification.quiz_attempts == 0


def rated_characters(participant: Participant) -> list:
    """The characters the participant rates in the panel's study (their membership's)."""
    from annotation.models import StudyMembership

    membership = StudyMembership.objects.filter(
        study_id=participant.panel_study.study_id, annotator_id=participant.user_id
    ).first()
    return [] if membership is None else list(membership.characters.order_by("pk"))


def items_left_for(participant: Participant) -> bool:
    """Whether the panel's study may still give the participant an item.

    "Nothing left" is decided by annotation's own rule of which items a person may be
    given (`eligibility.any_item_left`: not had before, no answer seen before, below the
    overlap, their characters), with one difference from the plan the rating page
    leases from: items that others hold a live lease on count as left. Such a lease
    lapses or is released (a time-out, a return) and the item comes back, so ending the
    batch then would pay a screen-out to someone who could have completed. Only when no
    such item exists (judged by enough people, or closed to them by what they have
    seen) can waiting never help. Their own live lease is an item in hand."""
    from annotation.models import Assignment, AssignmentState
    from annotation.selectors.eligibility import any_item_left

    study = participant.panel_study.study
    if Assignment.objects.filter(
        annotator_id=participant.user_id,
        item__study=study,
        state=AssignmentState.ACTIVE,
        expires_at__gt=timezone.now(),
    ).exists():
        return True
    character_ids = [character.pk for character in rated_characters(participant)]
    return any_item_left(participant.user, study, character_ids)


def ran_out_of_items(participant: Participant) -> bool:
    """Whether a screened-out participant was screened out for want of items (after
    being admitted) rather than by the quiz (never admitted)."""
    return participant_admitted(participant)


# Every participant's account is named so (services.participants): the rating page, which
# asks `batch_of` before every new item, then reads nothing for anyone else.
PANEL_ACCOUNT_PREFIX = "panel-"


class Batch(NamedTuple):
    """Where a participant's batch stands, as the rating page needs it."""

    state: str
    late: bool  # their deadline has passed
    slug: str  # their study's
    check_due: bool  # an attention check is owed before another item


def _judgments_in_study(user_id, study_id):
    return Judgment.objects.filter(annotator_id=user_id, study_id=study_id)


def _check_answers(participant_id):
    return CheckAnswer.objects.filter(participant_id=participant_id)


def batch_of(user) -> Batch | None:
    """For a panel participant: their state, whether their deadline has passed, their
    study's slug and whether they owe an attention check; None for anyone else. At most
    one read by the user's key (the counts behind the checks are subqueries of it), and
    none for an account that is not a participant's (the annotators of the hot loop)."""
    if not user.username.startswith(PANEL_ACCOUNT_PREFIX):
        return None
    rated = (
        _judgments_in_study(OuterRef("user_id"), OuterRef("panel_study__study_id"))
        .order_by()
        .values("annotator_id")
        .annotate(count=Count("pk"))
        .values("count")
    )
    answered = (
        _check_answers(OuterRef("pk"))
        .order_by()
        .values("participant_id")
        .annotate(last=Max("position"))
        .values("last")
    )
    found = (
        Participant.objects.filter(user_id=user.pk)
        .annotate(rated=Subquery(rated), answered=Subquery(answered))
        .values_list(
            "pk",
            "state",
            "deadline",
            "panel_study__study__slug",
            "panel_study__check_positions",
            "panel_study__voided_checks",
            "rated",
            "answered",
        )
        .first()
    )
    if found is None:
        return None
    pk, state, deadline, slug, positions, voided, rated_count, last = found
    due = _check_due(pk, positions, voided, rated=rated_count or 0, answered_up_to=last or 0)
    return Batch(state, timezone.now() >= deadline, slug, due is not None)


def _check_due(
    participant_id: int, positions, voided, *, rated: int, answered_up_to: int
) -> tuple[int, checks.Check] | None:
    position = checks.due_position(positions or [], rated=rated, answered_up_to=answered_up_to)
    if position is None:
        return None
    check = checks.check_shown(
        participant_id=participant_id, position=position, positions=positions, voided=voided
    )
    return None if check is None else (position, check)


def check_owed(participant: Participant) -> tuple[int, checks.Check] | None:
    """The attention check the participant must answer before another item or their
    code, with its position (the number of items rated before it); None if none is owed."""
    panel = participant.panel_study
    if not panel.check_positions:
        return None
    rated = _judgments_in_study(participant.user_id, panel.study_id).count()
    last = _check_answers(participant.pk).aggregate(last=Max("position"))["last"]
    return _check_due(
        participant.pk,
        panel.check_positions,
        panel.voided_checks,
        rated=rated,
        answered_up_to=last or 0,
    )


def checks_failed(participant: Participant) -> int:
    """The participant's failed checks that count: those staff did not set aside."""
    return (
        CheckAnswer.objects.filter(participant=participant, passed=False)
        .exclude(check_key__in=participant.panel_study.voided_checks)
        .count()
    )


@dataclass(frozen=True)
class CheckResult:
    """How one check of the bank fared in a study: answers given, failed, and whether
    staff set it aside as unclear."""

    key: str
    shown: int
    failed: int
    voided: bool


def check_results(panel_study: PanelStudy) -> dict[str, CheckResult]:
    """Every check of the bank (and any other key answered in the study), by key, in the
    bank's order: how often it was answered and failed, and whether it is voided."""
    counts = {
        key: (shown, failed)
        for key, shown, failed in CheckAnswer.objects.filter(participant__panel_study=panel_study)
        .order_by()
        .values("check_key")
        .annotate(shown=Count("pk"), failed=Count("pk", filter=Q(passed=False)))
        .values_list("check_key", "shown", "failed")
    }
    keys = [check.key for check in checks.BANK]
    keys += sorted(set(counts) - set(keys))
    voided = set(panel_study.voided_checks)
    return {key: CheckResult(key, *counts.get(key, (0, 0)), voided=key in voided) for key in keys}


# The quality flags that mark a participant's submission for a person to look at; none of
# them decides pay (only the attention checks do, by the panel's rules).
REVIEW_KINDS: tuple[str, ...] = (
    FlagKind.TOO_FAST.value,
    FlagKind.STRAIGHT_LINING.value,
    FlagKind.LOW_AGREEMENT.value,
    FlagKind.FAILED_CHECK.value,
)


def review_reasons_of(participant: Participant) -> dict[str, int]:
    """{flag kind: how many} of the participant's flags in their study, resolved or not:
    what a reviewer should look at (whether it was looked at is the participant's
    decision)."""
    counts = dict(
        QualityFlag.objects.filter(
            annotator_id=participant.user_id,
            study_id=participant.panel_study.study_id,
            kind__in=REVIEW_KINDS,
        )
        .order_by()
        .values("kind")
        .annotate(count=Count("pk"))
        .values_list("kind", "count")
    )
    return {kind: counts[kind] for kind in REVIEW_KINDS if counts.get(kind)}
