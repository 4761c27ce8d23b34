"""Where a form may send its user back to: the `next` it carries, if that is a page of
this site (never another host: an open redirect lets a phishing link borrow our name)."""

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest, default: str, *, within: str = "/") -> str:
    """The posted `next` if it is a path of this site under `within`, else `default`."""
    candidate = str(request.POST.get("next", ""))
    if candidate.startswith(within) and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default
