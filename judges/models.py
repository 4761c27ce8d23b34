"""LLM judges: a model rating a study's blinded pairs with the annotators' rubric.

A judge run is one configuration (study, endpoint and model, temperature, prompt language,
prompt and rubric version); a judge call is the run's one verdict on one item in one order
of the sides. Judge ratings live here, never among `annotation`'s judgments and ratings, so
no human figure, export or count can take them in by accident.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotation.models import Item, Metric
from collection.models import ModelEndpoint
from dialogues.models import Answer, Source

FIRST_ORDER = 1
# The same pair judged again with the sides of the first order swapped (`--both-orders`).
SWAPPED_ORDER = 2
ORDERS = (FIRST_ORDER, SWAPPED_ORDER)


class PromptLanguage(models.TextChoices):
    ZH = "zh", "中文"
    EN = "en", "English"


class JudgeRunStatus(models.TextChoices):
    RUNNING = "running", _("Running")
    # Stopped by an admin on the judges' page; its verdicts stay, resuming continues it.
    PAUSED = "paused", _("Paused")
    CANCELLED = "cancelled", _("Cancelled")
    FAILED = "failed", _("Failed")
    FINISHED = "finished", _("Finished")


class JudgeRun(models.Model):
    study = models.ForeignKey(
        "annotation.Study", on_delete=models.PROTECT, related_name="judge_runs"
    )
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="judge_runs")
    model = models.CharField(_("model"), max_length=200)
    temperature = models.FloatField(_("temperature"))
    language = models.CharField(_("prompt language"), max_length=2, choices=PromptLanguage)
    prompt_version = models.CharField(_("prompt version"), max_length=40)
    # A digest of the metric wording the prompt was built from: staff editing a definition
    # makes a new run instead of mixing two rubrics in one.
    rubric_version = models.CharField(_("rubric version"), max_length=16)
    # The exact system prompt, so a figure can be traced to the words the judge read.
    system_prompt = models.TextField(_("system prompt"))
    both_orders = models.BooleanField(_("both orders"), default=False)
    items_requested = models.PositiveIntegerField(_("items requested"), null=True, blank=True)
    # The source whose answers this judge's own model family wrote, for self-preference.
    self_source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Whether the server accepts a JSON-schema `response_format`; None until it is asked.
    structured_output = models.BooleanField(null=True, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=JudgeRunStatus, default=JudgeRunStatus.RUNNING
    )
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The run's report beside the humans (`selectors.judge_report`) as last computed, by
    # `judge_study` at the end of a run or by `judge_report`: the pages read it.
    figures = models.JSONField(null=True, blank=True)
    figures_computed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("judge run")
        verbose_name_plural = _("judge runs")
        constraints = [
            # Run again with the same configuration, a command continues this run.
            models.UniqueConstraint(
                fields=[
                    "study",
                    "endpoint",
                    "model",
                    "temperature",
                    "language",
                    "prompt_version",
                    "rubric_version",
                ],
                name="one_judge_run_per_configuration",
            ),
        ]

    def __str__(self):
        return f"{self.model} on {self.study.slug} #{self.pk}"

    @property
    def label(self) -> str:
        """How the pages name the run, in the page's language: its model, the language of
        the rubric it read and its temperature."""
        rubric = (
            gettext("Chinese rubric")
            if self.language == PromptLanguage.ZH
            else gettext("English rubric")
        )
        return gettext("%(model)s (%(rubric)s, temperature %(temperature)s)") % {
            "model": self.model,
            "rubric": rubric,
            "temperature": f"{self.temperature:g}",
        }


class JudgeCallStatus(models.TextChoices):
    OK = "ok", _("Rated")
    FAILED = "failed", _("Failed")


class JudgeCall(models.Model):
    """The run's verdict on one item in one order: the sides it was shown, what it said
    and what that cost. A failure keeps the reply and the reason and carries no ratings;
    the next pass of the run tries it again."""

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="calls")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="judge_calls")
    order = models.PositiveSmallIntegerField(_("order"))
    left_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    right_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    left_source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    right_source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(_("status"), max_length=10, choices=JudgeCallStatus)
    preferred_answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    is_tie = models.BooleanField(default=False)
    structured = models.BooleanField(_("JSON schema requested"), default=False)
    raw_reply = models.TextField(_("reply"), blank=True)
    error = models.TextField(_("error"), blank=True)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    latency_ms = models.PositiveIntegerField(_("latency (ms)"), null=True, blank=True)
    tokens_in = models.PositiveIntegerField(_("tokens in"), null=True, blank=True)
    tokens_out = models.PositiveIntegerField(_("tokens out"), null=True, blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("judge call")
        verbose_name_plural = _("judge calls")
        ordering = ["run_id", "item_id", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "item", "order"], name="one_judge_call_per_order"
            ),
            models.CheckConstraint(condition=Q(order__in=ORDERS), name="judge_order_1_or_2"),
            # A failure is never a verdict.
            models.CheckConstraint(
                condition=Q(status=JudgeCallStatus.OK)
                | Q(preferred_answer__isnull=True, is_tie=False),
                name="failed_judge_call_has_no_preference",
            ),
        ]

    def __str__(self):
        return f"run {self.run_id} item {self.item_id} order {self.order} ({self.status})"


class JudgeRating(models.Model):
    """One value for one metric of one answer, given by a judge call."""

    call = models.ForeignKey(JudgeCall, on_delete=models.CASCADE, related_name="ratings")
    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="+")
    value = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["call", "answer", "metric"], name="one_judge_rating_per_metric"
            ),
            models.CheckConstraint(
                condition=Q(value__gte=1, value__lte=5), name="judge_rating_1_to_5"
            ),
        ]

    def __str__(self):
        return f"{self.metric_id}={self.value}"
