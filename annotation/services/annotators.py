"""Staff decisions about annotators: suspending and reinstating them, and which studies
they work on (with a personal cap)."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from common.text import plain_text

from ..models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    AuditAction,
    ProfileStatus,
    Study,
    StudyMembership,
)
from . import audit
from .errors import AnnotationError


def _require_reason(reason: str) -> str:
    reason = plain_text(reason)
    if not reason:
        raise AnnotationError("reason", _("Please give a reason."))
    return reason


def _locked_profile(profile: AnnotatorProfile) -> AnnotatorProfile:
    return AnnotatorProfile.objects.select_for_update().select_related("user").get(pk=profile.pk)


@transaction.atomic
def annotator_suspend(*, profile: AnnotatorProfile, actor, reason: str) -> AnnotatorProfile:
    """Stop an annotator's work at once: their live leases go back to the pool."""
    reason = _require_reason(reason)
    locked = _locked_profile(profile)
    if locked.status == ProfileStatus.SUSPENDED:
        raise AnnotationError("already_suspended", _("This annotator is already suspended."))
    _suspend(locked, actor=actor, paused_reason=reason)
    profile.status, profile.paused_reason = locked.status, locked.paused_reason
    return profile


@transaction.atomic
def annotator_pause_automatically(*, annotator, study: Study, open_flags: int) -> bool:
    """Suspend an approved annotator whose open quality flags in `study` reached its
    threshold, as staff would, with the figures instead of a reason. False if they
    were not approved (already suspended, say), or rate only their studies' batches
    (`members_only`, a paid panel's participant): such a batch ends on a page of its own
    with the code the person is paid by, and a pause midway would leave them with
    neither items nor code. Their flags stay open for staff to review."""
    locked = (
        AnnotatorProfile.objects.select_for_update()
        .select_related("user")
        .filter(user=annotator, status=ProfileStatus.APPROVED, members_only=False)
        .first()
    )
    if locked is None:
        return False
    _suspend(
        locked, actor=None, automatic_pause={"flags": open_flags, "study": study.name}, study=study
    )
    return True


def _suspend(locked, *, actor, paused_reason="", automatic_pause=None, study=None) -> None:
    """The one way an annotator gets suspended: the standing, their leases, the audit."""
    before = {"status": locked.status, "paused_reason": locked.paused_reason}
    locked.status = ProfileStatus.SUSPENDED
    locked.paused_reason = paused_reason
    locked.automatic_pause = automatic_pause or {}
    locked.save(update_fields=["status", "paused_reason", "automatic_pause"])
    released = annotator_leases_release(annotator=locked.user)
    after = {"status": locked.status, "leases_released": released}
    if automatic_pause:
        after["automatic_pause"] = automatic_pause
    else:
        after["paused_reason"] = paused_reason
    audit.record(
        actor=actor,
        action=AuditAction.ANNOTATOR_SUSPEND,
        target=locked,
        target_label=locked.pseudonym,
        study=study,
        before=before,
        after=after,
        note=paused_reason,
    )


def annotator_leases_release(*, annotator) -> int:
    """Give the annotator's live leases back to the pool at once (a suspension, or a
    batch whose time ran out); how many there were."""
    return Assignment.objects.filter(annotator=annotator, state=AssignmentState.ACTIVE).update(
        state=AssignmentState.EXPIRED, expires_at=timezone.now()
    )


@transaction.atomic
def annotator_reinstate(*, profile: AnnotatorProfile, actor, reason: str) -> AnnotatorProfile:
    """Lift a suspension. The annotator's open flags stay for staff to resolve; they no
    longer pause anyone until a new flag arrives."""
    reason = _require_reason(reason)
    locked = _locked_profile(profile)
    if locked.status != ProfileStatus.SUSPENDED:
        raise AnnotationError("not_suspended", _("This annotator is not suspended."))
    approved = locked.qualifications.filter(status="approved").exists()
    before = {"status": locked.status, "paused_reason": locked.paused_reason}
    if locked.automatic_pause:
        before["automatic_pause"] = locked.automatic_pause
    locked.status = ProfileStatus.APPROVED if approved else ProfileStatus.SCREENING
    locked.paused_reason = ""
    locked.automatic_pause = {}
    locked.save(update_fields=["status", "paused_reason", "automatic_pause"])
    audit.record(
        actor=actor,
        action=AuditAction.ANNOTATOR_REINSTATE,
        target=locked,
        target_label=locked.pseudonym,
        before=before,
        after={"status": locked.status, "paused_reason": ""},
        note=reason,
    )
    profile.status, profile.paused_reason = locked.status, locked.paused_reason
    profile.automatic_pause = locked.automatic_pause
    return profile


def _parse_cap(cap) -> int | None:
    if cap in (None, ""):
        return None
    try:
        value = int(cap)
    except (TypeError, ValueError):
        value = -1
    if value < 0:
        raise AnnotationError("cap", _("A cap must be a whole number of 0 or more, or empty."))
    return value


def _study_characters(study: Study, characters) -> list[int]:
    ids = sorted({c.pk for c in characters or []})
    if set(ids) - set(study.characters.values_list("pk", flat=True)):
        raise AnnotationError("foreign_character", _("Choose characters of this study only."))
    return ids


@transaction.atomic
def membership_add(
    *, study: Study, annotator, actor, cap=None, characters=None, skips_allowed=None
) -> StudyMembership:
    """Assign an annotator to a study, optionally for some of its characters only and with
    a limit on skips. The first member makes the study members-only."""
    cap = _parse_cap(cap)
    character_ids = _study_characters(study, characters)
    profile = AnnotatorProfile.objects.filter(user=annotator).first()
    if profile is None:
        raise AnnotationError("not_annotator", _("This account is not an annotator."))
    membership, created = StudyMembership.objects.get_or_create(
        study=study, annotator=annotator, defaults={"cap": cap, "skips_allowed": skips_allowed}
    )
    if not created:
        raise AnnotationError("already_member", _("This annotator is already in the study."))
    membership.characters.set(character_ids)
    audit.record(
        actor=actor,
        action=AuditAction.MEMBERSHIP_ADD,
        target=membership,
        target_label=f"{profile.pseudonym} / {study.slug}",
        study=study,
        before={},
        after={
            "annotator": profile.pseudonym,
            "cap": cap,
            "characters": character_ids,
            **({"skips_allowed": skips_allowed} if skips_allowed is not None else {}),
        },
    )
    return membership


@transaction.atomic
def memberships_add(
    *, study: Study, annotators: list, actor, cap=None, characters=None
) -> list[StudyMembership]:
    """Assign several annotators at once, all or none."""
    if not annotators:
        raise AnnotationError("nothing_chosen", _("Choose at least one annotator."))
    return [
        membership_add(
            study=study, annotator=annotator, actor=actor, cap=cap, characters=characters
        )
        for annotator in annotators
    ]


@transaction.atomic
def membership_remove(*, membership: StudyMembership, actor) -> None:
    """Their live leases in the study go back to the pool; judgments already given stay."""
    pseudonym = _pseudonym(membership.annotator_id)
    Assignment.objects.filter(
        annotator_id=membership.annotator_id,
        item__study_id=membership.study_id,
        state=AssignmentState.ACTIVE,
    ).update(state=AssignmentState.EXPIRED, expires_at=timezone.now())
    audit.record(
        actor=actor,
        action=AuditAction.MEMBERSHIP_REMOVE,
        target=membership,
        target_label=f"{pseudonym} / {membership.study.slug}",
        study=membership.study,
        before={
            "annotator": pseudonym,
            "cap": membership.cap,
            "characters": sorted(membership.characters.values_list("pk", flat=True)),
        },
        after={},
    )
    membership.delete()


@transaction.atomic
def membership_cap_set(*, membership: StudyMembership, actor, cap) -> StudyMembership:
    """A personal cap for this study (None: the study's own cap applies)."""
    cap = _parse_cap(cap)
    locked = (
        StudyMembership.objects.select_for_update().select_related("study").get(pk=membership.pk)
    )
    before = {"cap": locked.cap}
    locked.cap = cap
    locked.save(update_fields=["cap"])
    audit.record(
        actor=actor,
        action=AuditAction.MEMBERSHIP_CAP,
        target=locked,
        target_label=f"{_pseudonym(locked.annotator_id)} / {locked.study.slug}",
        study=locked.study,
        before=before,
        after={"cap": cap},
    )
    membership.cap = cap
    return membership


def _pseudonym(user_id) -> str:
    return AnnotatorProfile.objects.filter(user_id=user_id).values_list(
        "pseudonym", flat=True
    ).first() or str(user_id)
