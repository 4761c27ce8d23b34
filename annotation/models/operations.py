"""Signs of life of the background workers."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class WorkerHeartbeat(models.Model):
    """Last sign of life of each Celery worker, written by a beat-scheduled task.

    Staff read it on the health page to tell a stalled results pipeline from a quiet one.
    """

    hostname = models.CharField(_("worker"), max_length=200, unique=True)
    seen_at = models.DateTimeField(_("last seen"))

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self):
        return f"{self.hostname} @ {self.seen_at:%Y-%m-%d %H:%M:%S}"
