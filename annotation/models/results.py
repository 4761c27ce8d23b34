"""Derived results, written only by the aggregation (Celery workers or `aggregate`)."""

from django.db import models


class StudyResults(models.Model):
    """Everything computed from a study's judgments, as one document that is replaced
    whole on each recompute (an idempotent upsert). `judgments` and `computed_at` say
    what the figures cover."""

    study = models.OneToOneField(
        "annotation.Study", on_delete=models.CASCADE, related_name="results"
    )
    computed_at = models.DateTimeField()
    judgments = models.PositiveIntegerField()
    seconds = models.FloatField(help_text="How long the computation took.")
    payload = models.JSONField()

    class Meta:
        verbose_name_plural = "study results"

    def __str__(self):
        return f"results of {self.study_id} ({self.judgments} judgments)"
