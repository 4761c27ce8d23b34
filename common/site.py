"""The address links to this site are built on, where a link leaves the site: in an
email, or in a join link staff paste into a participant panel."""

from django.conf import settings
from django.http import HttpRequest


def site_url(request: HttpRequest | None = None) -> str:
    """The site's address, without a trailing slash: CHATANIME_SITE_URL where it is set;
    else, in answer to a request, the address that request reached (scheme, host and
    port, the host checked against ALLOWED_HOSTS), so that a link in an email a staff
    member's decision sends opens the site they were using; else the default."""
    if settings.SITE_URL_SET or request is None:
        return settings.SITE_URL.rstrip("/")
    return request.build_absolute_uri("/").rstrip("/")
