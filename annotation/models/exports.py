"""Export files prepared by a worker for a researcher to download when ready."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .studies import Study


class ExportKind(models.TextChoices):
    CSV = "csv", _("Long CSV (one row per rating)")
    WIDE = "wide", _("Wide CSV (one row per judgment)")
    JSONL = "jsonl", "JSONL"
    SNAPSHOT = (
        "snapshot",
        _(
            "Frozen snapshot (zipped: the three formats, audit trail, answers, results and manifest)"
        ),
    )


class ExportStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Ready")
    FAILED = "failed", _("Failed")
    EXPIRED = "expired", _("Expired")


class ExportJob(models.Model):
    """A researcher's request for an export file. A worker writes the file under
    MEDIA_ROOT/exports/ and records its size and checksum."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="export_jobs")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=10, choices=ExportKind)
    include_excluded = models.BooleanField(default=False)
    bom = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=ExportStatus, default=ExportStatus.QUEUED)
    file = models.FileField(upload_to="exports/", blank=True)
    rows = models.PositiveBigIntegerField(null=True, blank=True)
    size = models.PositiveBigIntegerField(null=True, blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["requested_by", "study", "-created_at"])]

    def __str__(self):
        return f"{self.kind} export of {self.study_id} ({self.status})"

    @property
    def pending(self) -> bool:
        return self.status in (ExportStatus.QUEUED, ExportStatus.RUNNING)
