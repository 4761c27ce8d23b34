"""Fans writing the human side of a study: writers, writing runs and their tasks.

A writing run fills one `Source` of kind human. Each (character, scenario) cell of a run
is one task, written by one writer: round 1, then a follow-up from the user (simulated by
an LLM endpoint or written by a second person), then round 2. Only answers that staff
accept become `dialogues.Answer`s.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models.common import new_token
from dialogues.models import Character, Scenario, Source


class ApplicationStatus(models.TextChoices):
    PENDING = "pending", _("Awaiting review")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class WriterApplication(models.Model):
    """A screened person's request to write as one character, with a writing sample.
    Staff approve writers per character; a person may write some characters and rate
    others."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="writer_applications"
    )
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    sample = models.TextField(_("writing sample"))
    status = models.CharField(
        max_length=20, choices=ApplicationStatus, default=ApplicationStatus.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = _("writer applications")
        ordering = ["created_at", "pk"]
        verbose_name = _("writer application")
        constraints = [
            models.UniqueConstraint(fields=["user", "character"], name="one_writer_application")
        ]

    def __str__(self):
        return f"{self.user} / {self.character} / {self.status}"


class FollowupMode(models.TextChoices):
    SIMULATOR = "simulator", _("LLM user simulator")
    PERSON = "person", _("A second person plays the user")


class RunStatus(models.TextChoices):
    OPEN = "open", _("Open")
    CLOSED = "closed", _("Closed")


class WritingRun(models.Model):
    name = models.CharField(_("name"), max_length=200, unique=True)
    source = models.OneToOneField(
        Source,
        on_delete=models.PROTECT,
        related_name="writing_run",
        help_text=_("The human source that accepted answers join."),
    )
    characters = models.ManyToManyField(Character, related_name="+")
    scenarios = models.ManyToManyField(Scenario, related_name="+")
    followup_mode = models.CharField(
        _("round-2 follow-up by"), max_length=20, choices=FollowupMode, default=FollowupMode.PERSON
    )
    simulator = models.ForeignKey(
        "collection.ModelEndpoint",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("user simulator endpoint"),
    )
    writers_per_character = models.PositiveSmallIntegerField(
        _("writers per character"),
        default=0,
        help_text=_("At most this many writers share a character's scenarios; 0: no limit."),
    )
    deadline = models.DateTimeField(_("deadline"), null=True, blank=True)
    lease_minutes = models.PositiveSmallIntegerField(_("lease (minutes)"), default=60)
    min_chars = models.PositiveSmallIntegerField(_("shortest answer (characters)"), default=10)
    max_chars = models.PositiveSmallIntegerField(_("longest answer (characters)"), default=400)
    status = models.CharField(max_length=10, choices=RunStatus, default=RunStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = _("writing runs")
        ordering = ["-created_at"]
        verbose_name = _("writing run")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_chars__gte=1)
                & models.Q(max_chars__gte=models.F("min_chars")),
                name="writing_run_length_limits",
            ),
            models.CheckConstraint(
                condition=~models.Q(followup_mode="simulator") | models.Q(simulator__isnull=False),
                name="writing_run_simulator_needs_endpoint",
            ),
        ]

    def __str__(self):
        return self.name


class TaskState(models.TextChoices):
    OPEN = "open", _("Not started")
    ROUND_1 = "round_1", _("Writing round 1")
    AWAITING_FOLLOWUP = "awaiting_followup", _("Waiting for the user's follow-up")
    ROUND_2 = "round_2", _("Writing round 2")
    SUBMITTED = "submitted", _("Awaiting review")
    RETURNED = "returned", _("Returned to the writer")
    ACCEPTED = "accepted", _("Accepted")


class WritingTask(models.Model):
    """One cell of a run. The unique cell constraint is what keeps two writers from ever
    writing the same scenario of the same run: a cell is one row, leased by one writer."""

    run = models.ForeignKey(WritingRun, on_delete=models.CASCADE, related_name="tasks")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="+")
    token = models.CharField(max_length=32, unique=True, default=new_token)
    state = models.CharField(max_length=20, choices=TaskState, default=TaskState.OPEN)
    writer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="writing_tasks",
    )
    leased_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    answer_r1 = models.TextField(blank=True)
    question_r2 = models.TextField(blank=True)
    answer_r2 = models.TextField(blank=True)
    # The person playing the user, when the run has no simulator.
    followup_writer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    followup_token = models.CharField(max_length=32, unique=True, default=new_token)
    followup_expires_at = models.DateTimeField(null=True, blank=True)
    followup_error = models.TextField(blank=True)
    # The simulator's exact prompt, like generated answers keep theirs.
    followup_prompt = models.TextField(blank=True)
    round_2_started_at = models.DateTimeField(null=True, blank=True)
    seconds_r1 = models.FloatField(null=True, blank=True)
    seconds_r2 = models.FloatField(null=True, blank=True)
    paste_events = models.PositiveIntegerField(default=0)
    # ["paste", "near_duplicate:gpt-4.1:r1", ...]: why staff should look closely.
    flags = models.JSONField(default=list, blank=True)
    review_note = models.TextField(blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = _("writing tasks")
        ordering = ["run_id", "character_id", "scenario__number"]
        verbose_name = _("writing task")
        constraints = [
            models.UniqueConstraint(
                fields=["run", "character", "scenario"], name="one_writing_task_per_cell"
            ),
            models.CheckConstraint(
                condition=models.Q(state="open") | models.Q(writer__isnull=False),
                name="writing_task_started_has_writer",
            ),
        ]
        indexes = [models.Index(fields=["run", "state"])]

    def __str__(self):
        return f"{self.run} / {self.character} / {self.scenario.number}"


class CharacterProfile(models.Model):
    """What a writer reads about the character before answering as them: personality,
    way of speaking, habits. Written by staff."""

    character = models.OneToOneField(
        Character, on_delete=models.CASCADE, related_name="writing_profile"
    )
    text_zh = models.TextField(_("profile (Chinese)"))
    text_en = models.TextField(_("profile (English)"), blank=True)

    class Meta:
        verbose_name_plural = _("character profiles")
        verbose_name = _("character profile")

    def __str__(self):
        return str(self.character)

    @property
    def text(self) -> str:
        from annotation.models.common import localized

        return localized(self.text_zh, self.text_en)
