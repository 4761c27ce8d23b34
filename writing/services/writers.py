"""Who writes: screening as for annotators, then an application staff review per
character."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import AnnotatorProfile, AuditAction, Qualification, QualificationStatus
from annotation.services import audit
from common.text import plain_text
from dialogues.models import Character

from ..models import ApplicationStatus, WriterApplication
from .errors import WritingError
from .text import NOTE_MAX_CHARS, SAMPLE_MAX_CHARS, SAMPLE_MIN_CHARS, clean_text


def screened_character_ids(user) -> set[int]:
    """Characters whose quiz this person passed (screening as for annotators)."""
    return set(
        Qualification.objects.filter(
            profile__user=user,
            profile__consented_at__isnull=False,
            status__in=[QualificationStatus.PASSED, QualificationStatus.APPROVED],
        ).values_list("character_id", flat=True)
    )


def writer_character_ids(user) -> set[int]:
    return set(
        WriterApplication.objects.filter(user=user, status=ApplicationStatus.APPROVED).values_list(
            "character_id", flat=True
        )
    )


@transaction.atomic
def writer_apply(*, user, character: Character, sample: str) -> WriterApplication:
    if character.pk not in screened_character_ids(user):
        raise WritingError(
            "not_screened", _("Pass the screening quiz for this character before applying.")
        )
    sample = clean_text(
        sample,
        limit=SAMPLE_MAX_CHARS,
        min_chars=SAMPLE_MIN_CHARS,
        field=_("The writing sample"),
    )
    application = WriterApplication.objects.filter(user=user, character=character).first()
    if application is not None and application.status != ApplicationStatus.REJECTED:
        raise WritingError("already_applied", _("You have already applied for this character."))
    if application is None:
        return WriterApplication.objects.create(user=user, character=character, sample=sample)
    application.sample = sample
    application.status = ApplicationStatus.PENDING
    application.save(update_fields=["sample", "status"])
    return application


@transaction.atomic
def writer_review(
    *, application: WriterApplication, reviewer, approve: bool, note: str = ""
) -> WriterApplication:
    application = WriterApplication.objects.select_for_update().get(pk=application.pk)
    note = plain_text(note, NOTE_MAX_CHARS)
    before = {"status": application.status, "review_note": application.review_note}
    application.status = ApplicationStatus.APPROVED if approve else ApplicationStatus.REJECTED
    application.reviewed_by = reviewer
    application.reviewed_at = timezone.now()
    application.review_note = note
    application.save()
    profile = AnnotatorProfile.objects.filter(user=application.user).first()
    audit.record(
        actor=reviewer,
        action=AuditAction.WRITER_APPROVE if approve else AuditAction.WRITER_REJECT,
        target=application,
        target_label=f"{profile.pseudonym if profile else application.user_id} / "
        f"{application.character.key}",
        before=before,
        after={"status": application.status, "review_note": note},
        note=note,
    )
    return application
