from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from annotation.selectors import last_worker_heartbeat
from common.roles import is_researcher

from .middleware import DATABASE_ERRORS


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"researcher": is_researcher(request.user)})


@require_GET
def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    # Browsers ask for /favicon.ico whatever the page links to; the icon itself is a
    # static file like any other (hashed and long-cached in production).
    return redirect(static("favicon.ico"), permanent=True)


def _broker_reachable() -> bool | None:
    """None when no broker is configured (the embedded mode runs tasks in-process)."""
    from django.conf import settings

    if not settings.REDIS_URL:
        return None
    import redis

    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1).ping())
    except redis.RedisError:
        return False


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """Liveness for load balancers and compose health checks: 200 while the database
    answers; the broker and workers are reported but do not fail the check, because
    rating keeps working without them.

    Written here rather than with django-health-check: that package fails the whole check
    when any backend fails (the broker included), and its Celery check needs a result
    backend and a live round trip, while here only the database decides and the worker is
    judged by the heartbeat the beat schedule records."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database_ok = True
    except DATABASE_ERRORS:
        database_ok = False
    # The heartbeat is read from the same database: asking it again after it failed would
    # raise, and the outage middleware would answer with its HTML page instead of this JSON.
    heartbeat = last_worker_heartbeat() if database_ok else None
    body = {
        "database": "ok" if database_ok else "unreachable",
        "broker": {None: "in-process", True: "ok", False: "unreachable"}[_broker_reachable()],
        "worker_seen_seconds_ago": (
            round((timezone.now() - heartbeat.seen_at).total_seconds()) if heartbeat else None
        ),
    }
    return JsonResponse(body, status=200 if database_ok else 503)
