"""Types the views are annotated with; nothing here changes at run time.

Django's `HttpRequest` knows neither the `htmx` attribute django-htmx's middleware adds
(it is in every settings module) nor that, behind `login_required` or a role decorator
(`common.roles`), the user is signed in. These subclasses say so for mypy."""

from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils.functional import Promise
from django_htmx.middleware import HtmxDetails

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise
else:
    # A text or a lazily translated one. django_stubs_ext is a development dependency
    # only; at run time the alias is what it defines there.
    StrOrPromise = str | Promise


class HtmxRequest(HttpRequest):
    """Any request to the site: `request.htmx` says whether htmx sent it."""

    htmx: HtmxDetails


class AuthenticatedRequest(HtmxRequest):
    """A request to a view behind `login_required` or a role decorator: a signed-in user."""

    user: User
