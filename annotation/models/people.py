"""Annotators and their screening."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from dialogues.models import Character

from .common import localized, new_pseudonym


class ProfileStatus(models.TextChoices):
    APPLIED = "applied", _("Applied")
    SCREENING = "screening", _("Screening")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    SUSPENDED = "suspended", _("Suspended")


class AnnotatorProfile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_profile"
    )
    status = models.CharField(max_length=20, choices=ProfileStatus, default=ProfileStatus.APPLIED)
    consented_at = models.DateTimeField(null=True, blank=True)
    # The language they read the site in when they consented: their emails are written in
    # it (empty: the platform's default language).
    language = models.CharField(max_length=10, blank=True)
    # A stable pseudonym for exports: no email or name leaves the platform.
    pseudonym = models.CharField(max_length=32, unique=True, default=new_pseudonym)
    # Why staff suspended the annotator, in their own words.
    paused_reason = models.TextField(blank=True)
    # Set instead when quality flags paused the annotator: {"flags": n, "study": name}.
    automatic_pause = models.JSONField(default=dict, blank=True)
    simulated = models.BooleanField(
        default=False, help_text=_("A simulated annotator created by simulate_study.")
    )
    # Rates only the studies they are a member of, never a study open to everyone (a paid
    # panel's participant, whose batch belongs to one study).
    members_only = models.BooleanField(
        default=False, help_text=_("Rates only the studies this annotator is a member of.")
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = _("annotator profiles")
        verbose_name = _("annotator profile")

    def __str__(self):
        return f"{self.user} ({self.status})"

    @property
    def pause_description(self) -> str:
        """Why the annotator is suspended, in the active language for automatic pauses."""
        if self.automatic_pause:
            return describe_automatic_pause(self.automatic_pause)
        return self.paused_reason


def describe_automatic_pause(pause: dict) -> str:
    count = int(pause.get("flags", 0))
    return ngettext(
        "paused automatically after %(count)d open quality flag in %(study)s",
        "paused automatically after %(count)d open quality flags in %(study)s",
        count,
    ) % {"count": count, "study": pause.get("study", "")}


class QualificationStatus(models.TextChoices):
    CLAIMED = "claimed", _("Claimed, quiz not taken")
    PASSED = "passed", _("Quiz passed, awaiting review")
    FAILED = "failed", _("Quiz failed")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class Qualification(models.Model):
    """An annotator's standing for one character: claimed, quizzed, then reviewed by staff.
    Only approved qualifications of approved annotators get work."""

    profile = models.ForeignKey(
        AnnotatorProfile, on_delete=models.CASCADE, related_name="qualifications"
    )
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=20, choices=QualificationStatus, default=QualificationStatus.CLAIMED
    )
    quiz_score = models.FloatField(null=True, blank=True)
    quiz_attempts = models.PositiveSmallIntegerField(default=0)
    roleplay_sample = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)

    class Meta:
        verbose_name = _("qualification")
        verbose_name_plural = _("qualifications")
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "character"], name="one_qualification_per_character"
            )
        ]

    def __str__(self):
        return f"{self.profile.user} / {self.character} / {self.status}"


class ScreeningQuestion(models.Model):
    """A multiple-choice question about a character and their work, from staff's bank."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    prompt_zh = models.TextField()
    prompt_en = models.TextField(blank=True)
    # [{"zh": ..., "en": ...}, ...]
    choices = models.JSONField()
    correct_choice = models.PositiveSmallIntegerField(
        help_text=_("Index of the right choice, from 0.")
    )
    active = models.BooleanField(default=True)

    class Meta:
        verbose_name = _("screening question")
        verbose_name_plural = _("screening questions")
        ordering = ["character_id", "id"]

    def __str__(self):
        return self.prompt_zh[:60]

    @property
    def prompt(self):
        return localized(self.prompt_zh, self.prompt_en)

    def choice_labels(self) -> list[str]:
        return [localized(c.get("zh", ""), c.get("en", "")) for c in self.choices]
