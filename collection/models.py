"""Collecting a model's answers through an OpenAI-compatible chat-completions API.

An endpoint says where and how to call a model; a collection run says which cells
(character x scenario x round) a source needs; every generated answer keeps the exact
system prompt and the call's figures. Only accepted answers become `dialogues.Answer`s.
API keys never live in the database: an endpoint names the environment variable or the
secret file that holds its key.
"""

import os
from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from dialogues.models import ROUNDS, Character, Scenario, Source


class EndpointKeyMissing(Exception):
    """The key an endpoint names cannot be read; the message says where it looked."""


class ModelEndpoint(models.Model):
    name = models.CharField(_("name"), max_length=200, unique=True)
    source_slug = models.SlugField(
        _("source slug"),
        max_length=100,
        blank=True,
        help_text=_(
            "The answer source this endpoint's model answers as; empty for a user simulator."
        ),
    )
    base_url = models.URLField(
        _("base URL"), max_length=500, help_text=_("e.g. http://127.0.0.1:8000/v1")
    )
    model = models.CharField(_("model"), max_length=200)
    temperature = models.FloatField(_("temperature"), default=0.7)
    max_tokens = models.PositiveIntegerField(_("max tokens"), default=1024)
    top_p = models.FloatField(_("top-p"), null=True, blank=True)
    api_key_env = models.CharField(
        _("API key environment variable"),
        max_length=100,
        blank=True,
        help_text=_("Name of the environment variable that holds the key (never the key itself)."),
    )
    api_key_file = models.CharField(
        _("API key file"),
        max_length=500,
        blank=True,
        help_text=_("Path of a secret file that holds the key (never the key itself)."),
    )
    concurrency = models.PositiveSmallIntegerField(_("concurrent calls"), default=4)
    rate_per_minute = models.PositiveIntegerField(_("calls per minute"), default=60)
    timeout_seconds = models.FloatField(_("timeout (seconds)"), default=120)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("model endpoint")
        verbose_name_plural = _("model endpoints")
        constraints = [
            models.CheckConstraint(
                condition=~(~models.Q(api_key_env="") & ~models.Q(api_key_file="")),
                name="endpoint_key_from_env_or_file_not_both",
            ),
            models.CheckConstraint(
                condition=models.Q(concurrency__gte=1, rate_per_minute__gte=1),
                name="endpoint_limits_positive",
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def limiter_key(self) -> str:
        # With the creation time, a recreated endpoint that reuses an id (SQLite, a
        # restored database) never inherits the old one's slots or call log.
        return f"{self.pk}-{int(self.created_at.timestamp() * 1000)}"

    def api_key(self) -> str:
        """Read the key now, so a rotated key is picked up without a restart. Servers
        such as llama.cpp or Ollama need no key; the client still wants a string."""
        if self.api_key_env:
            value = os.environ.get(self.api_key_env, "").strip()
            if not value:
                raise EndpointKeyMissing(
                    gettext(
                        "Endpoint “%(endpoint)s”: the environment variable %(variable)s is"
                        " not set. It must be set in the environment where the web server"
                        " and the workers run (restart them once it is set)."
                    )
                    % {"endpoint": self.name, "variable": self.api_key_env}
                )
            return value
        if self.api_key_file:
            try:
                value = Path(self.api_key_file).read_text(encoding="utf-8").strip()
            except OSError as error:
                raise EndpointKeyMissing(
                    gettext(
                        "Endpoint “%(endpoint)s”: the key file %(path)s cannot be read"
                        " (%(reason)s). It must be readable where the web server and the"
                        " workers run."
                    )
                    % {"endpoint": self.name, "path": self.api_key_file, "reason": error.strerror}
                ) from None
            if not value:
                raise EndpointKeyMissing(
                    gettext("Endpoint “%(endpoint)s”: the key file %(path)s is empty.")
                    % {"endpoint": self.name, "path": self.api_key_file}
                )
            return value
        return "no-key"


class CharacterPrompt(models.Model):
    """One version of a character's system prompt. Versions are never edited in place:
    saving a change adds a version, so every generated answer's prompt stays findable."""

    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="system_prompts"
    )
    version = models.PositiveIntegerField(_("version"))
    template = models.TextField(
        _("template"),
        help_text=_("Placeholders: {work} {name} (the character's work and name in Chinese)."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["character_id", "-version"]
        verbose_name = _("character prompt")
        verbose_name_plural = _("character prompts")
        constraints = [
            models.UniqueConstraint(fields=["character", "version"], name="one_prompt_per_version")
        ]

    def __str__(self):
        return f"{self.character} v{self.version}"


class RunStatus(models.TextChoices):
    RUNNING = "running", _("Running")
    PAUSED = "paused", _("Paused")
    CANCELLED = "cancelled", _("Cancelled")
    FAILED = "failed", _("Failed")
    FINISHED = "finished", _("Finished")


UNFINISHED_RUN_STATUSES = (RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.FAILED)


class CollectionRun(models.Model):
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="collection_runs")
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="runs")
    simulator_endpoint = models.ForeignKey(
        ModelEndpoint, on_delete=models.PROTECT, related_name="simulated_runs"
    )
    simulator_prompt = models.TextField(_("user simulator prompt"))
    characters = models.ManyToManyField(Character, related_name="+")
    scenario_numbers = models.JSONField(_("scenarios"), default=list)
    rounds = models.JSONField(_("rounds"), default=list)
    status = models.CharField(
        _("status"), max_length=10, choices=RunStatus, default=RunStatus.RUNNING
    )
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("collection run")
        verbose_name_plural = _("collection runs")

    def __str__(self):
        return f"{self.source.slug} #{self.pk}"


class ReviewStatus(models.TextChoices):
    ACCEPTED = "accepted", _("Accepted")
    FLAGGED = "flagged", _("Flagged for review")


class GeneratedAnswer(models.Model):
    """What the model said for one cell and round, with how it was asked and what the
    call cost. One per source, character, scenario and round, whichever run made it."""

    run = models.ForeignKey(
        CollectionRun, on_delete=models.CASCADE, related_name="generated_answers"
    )
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="generated_answers")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField(_("round"), choices=[(1, "1"), (2, "2")])
    question = models.TextField(_("question"))
    text = models.TextField(_("answer"), blank=True)
    system_prompt = models.TextField(_("system prompt"))
    prompt = models.ForeignKey(CharacterPrompt, on_delete=models.PROTECT, related_name="answers")
    model = models.CharField(_("model"), max_length=200)
    finish_reason = models.CharField(_("finish reason"), max_length=40, blank=True)
    latency_ms = models.PositiveIntegerField(_("latency (ms)"))
    tokens_in = models.PositiveIntegerField(_("tokens in"), null=True, blank=True)
    tokens_out = models.PositiveIntegerField(_("tokens out"), null=True, blank=True)
    flags = models.JSONField(_("flags"), default=list, blank=True)
    review_status = models.CharField(_("review"), max_length=10, choices=ReviewStatus)
    answer = models.OneToOneField(
        "dialogues.Answer",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="generated",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["character_id", "scenario_id", "round"]
        verbose_name = _("generated answer")
        verbose_name_plural = _("generated answers")
        constraints = [
            models.UniqueConstraint(
                fields=["source", "character", "scenario", "round"],
                name="one_generated_answer_per_cell",
            ),
            models.CheckConstraint(
                condition=models.Q(round__in=ROUNDS), name="generated_round_1_or_2"
            ),
        ]

    def __str__(self):
        return f"{self.source.slug} / {self.character} / {self.scenario.number} / r{self.round}"


class SimulatedFollowup(models.Model):
    """The user simulator's round-2 message, reacting to this source's round-1 answer."""

    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="+")
    run = models.ForeignKey(CollectionRun, on_delete=models.CASCADE, related_name="followups")
    text = models.TextField(_("round-2 question"))
    simulator_prompt = models.TextField(_("user simulator prompt"))
    model = models.CharField(_("model"), max_length=200)
    latency_ms = models.PositiveIntegerField(_("latency (ms)"))
    tokens_in = models.PositiveIntegerField(null=True, blank=True)
    tokens_out = models.PositiveIntegerField(null=True, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "character", "scenario"], name="one_followup_per_cell"
            )
        ]

    def __str__(self):
        return self.text[:40]


class CallOutcome(models.TextChoices):
    OK = "ok", _("OK")
    RETRIED = "retried", _("Transient error, retried")
    GAVE_UP = "gave_up", _("Transient error, gave up")
    PERMANENT = "permanent", _("Permanent error")


class CallPurpose(models.TextChoices):
    ANSWER = "answer", _("Answer")
    FOLLOWUP = "followup", _("Simulated follow-up")


class ApiCall(models.Model):
    """One HTTP attempt, successful or not: the run's token, latency and error figures."""

    run = models.ForeignKey(
        CollectionRun, null=True, on_delete=models.CASCADE, related_name="calls"
    )
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.CASCADE, related_name="calls")
    purpose = models.CharField(max_length=10, choices=CallPurpose)
    character = models.ForeignKey(Character, null=True, on_delete=models.SET_NULL, related_name="+")
    scenario_number = models.PositiveSmallIntegerField(null=True)
    round = models.PositiveSmallIntegerField(null=True)
    outcome = models.CharField(max_length=10, choices=CallOutcome)
    status_code = models.PositiveSmallIntegerField(null=True)
    error = models.TextField(blank=True)
    latency_ms = models.PositiveIntegerField()
    tokens_in = models.PositiveIntegerField(null=True)
    tokens_out = models.PositiveIntegerField(null=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("model call")
        verbose_name_plural = _("model calls")
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["run", "outcome"])]

    def __str__(self):
        return f"{self.endpoint} {self.purpose} {self.outcome}"


class CellFailure(models.Model):
    """A cell whose transient errors outlasted the retries; the next pass tries it again."""

    run = models.ForeignKey(CollectionRun, on_delete=models.CASCADE, related_name="failures")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    scenario = models.ForeignKey(Scenario, on_delete=models.CASCADE, related_name="+")
    error = models.TextField()
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "character", "scenario"], name="one_failure_per_cell"
            )
        ]

    def __str__(self):
        return self.error[:60]


class AnswerEdit(models.Model):
    """Audit trail of staff changes to a generated answer's text."""

    # Kept when a regenerated answer is deleted: the cell label says what it was.
    generated_answer = models.ForeignKey(
        GeneratedAnswer, null=True, on_delete=models.SET_NULL, related_name="edits"
    )
    run = models.ForeignKey(CollectionRun, on_delete=models.CASCADE, related_name="edits")
    cell = models.CharField(max_length=300)
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=20)
    text_before = models.TextField(blank=True)
    text_after = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("answer edit")
        verbose_name_plural = _("answer edits")
        ordering = ["created_at"]

    def __str__(self):
        return f"{self.action} {self.created_at:%Y-%m-%d %H:%M}"
