"""What annotators rate: the nine metrics and response diversity."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from .common import localized


class Dimension(models.TextChoices):
    BASIC = "basic", _("Basic dialogue")
    ROLE_PLAYING = "role_playing", _("Role-playing")
    EMOTIONAL_SUPPORT = "emotional_support", _("Emotional support")
    OVERALL = "overall", _("Overall")


class Metric(models.Model):
    """One thing annotators rate on a 1–5 scale. The nine pair metrics and diversity are
    created by a data migration; their wording is editable in the admin."""

    slug = models.SlugField(unique=True)
    dimension = models.CharField(max_length=20, choices=Dimension)
    position = models.PositiveSmallIntegerField(default=0)
    label_zh = models.CharField(max_length=50)
    label_en = models.CharField(max_length=50)
    definition_zh = models.TextField()
    definition_en = models.TextField()
    # {"1": {"zh": ..., "en": ...}, ..., "5": {...}}
    anchors = models.JSONField(default=dict)
    for_diversity = models.BooleanField(
        default=False, help_text=_("Rated on diversity sets instead of answer pairs.")
    )

    class Meta:
        verbose_name = _("metric")
        verbose_name_plural = _("metrics")
        ordering = ["position"]

    def __str__(self):
        return self.slug

    @property
    def label(self):
        return localized(self.label_zh, self.label_en)

    @property
    def definition(self):
        return localized(self.definition_zh, self.definition_en)

    def anchor_list(self) -> list[tuple[int, str]]:
        """(value, meaning) for 1..5 in the UI language."""
        return [
            (value, localized(entry.get("zh", ""), entry.get("en", "")))
            for value, entry in ((v, self.anchors.get(str(v), {})) for v in range(1, 6))
        ]
