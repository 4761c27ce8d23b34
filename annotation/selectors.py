"""Non-trivial reads of the annotation domain."""

from .models import WorkerHeartbeat


def last_worker_heartbeat() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.order_by("-seen_at").first()
