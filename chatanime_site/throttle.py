"""Brute-force protection for the Django admin's own log-in form.

The site's log-in (allauth) is throttled by ACCOUNT_RATE_LIMITS; the admin has a form of
its own at /admin/login/, throttled here with the same allowance: after too many failed
attempts from one address, or for one user name, further attempts are refused with 429
until the window has passed.
"""

import contextlib
import hashlib
import logging
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import translation

logger = logging.getLogger(__name__)


def _keys(request) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "")
    username = request.POST.get("username", "").strip().lower()
    digest = hashlib.sha256(username.encode()).hexdigest()
    return [f"admin-login-failed:ip:{address}", f"admin-login-failed:user:{digest}"]


# With Redis down the cache counts nothing (chatanime_site.cache), so staff are let
# through rather than locked out.
def _failures(keys) -> int:
    return max(cache.get(key, 0) for key in keys)


def _count_failure(keys) -> None:
    window = settings.ADMIN_LOGIN_FAILURE_WINDOW_SECONDS
    for key in keys:
        if not cache.add(key, 1, timeout=window):
            with contextlib.suppress(ValueError):  # it expired in between: one less counted
                cache.incr(key)


def throttled_login(login_view):
    @wraps(login_view)
    def view(request, *args, **kwargs):
        if request.method != "POST":
            return login_view(request, *args, **kwargs)
        keys = _keys(request)
        if _failures(keys) >= settings.ADMIN_LOGIN_FAILURE_LIMIT:
            logger.warning("admin log-in throttled for %s", request.META.get("REMOTE_ADDR"))
            response = HttpResponse(
                render_to_string("429.html", {"LANGUAGE_CODE": translation.get_language()}),
                status=429,
            )
            response["Retry-After"] = str(settings.ADMIN_LOGIN_FAILURE_WINDOW_SECONDS)
            return response
        response = login_view(request, *args, **kwargs)
        if not request.user.is_authenticated:
            _count_failure(keys)
        return response

    return view
