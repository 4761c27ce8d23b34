import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import translation
from django_htmx.http import reswap, retarget

logger = logging.getLogger(__name__)

# What Django raises when the database cannot be reached or dropped the connection.
DATABASE_ERRORS = (OperationalError, InterfaceError)


class ChosenLanguageMiddleware:
    """Chinese unless the person chose otherwise.

    Django's LocaleMiddleware follows the browser's Accept-Language, which would show
    English to a Chinese fan whose phone is set to English. Here only an explicit choice
    (the language cookie set by the switcher) overrides LANGUAGE_CODE.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.supported = {code for code, _name in settings.LANGUAGES}

    def __call__(self, request):
        chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        language = chosen if chosen in self.supported else settings.LANGUAGE_CODE
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
        response.headers.setdefault("Vary", "Cookie")
        return response


class DatabaseUnavailableMiddleware:
    """While PostgreSQL restarts or fails over, answer 503 with a page that says the
    request was not carried out and can be sent again, instead of a 500 traceback.

    Ratings are written in one transaction, so a submission that fails here left nothing
    behind, and one that did commit is recognised when it is sent again: resubmitting is
    always safe. The page is rendered without touching the database (no user, no session).
    For htmx requests only the message is returned, inserted above the rating form, so the
    annotator's choices stay on screen for the retry.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DATABASE_ERRORS):
            return None
        logger.warning(
            "database unavailable during %s %s", request.method, request.path, exc_info=True
        )
        htmx = request.headers.get("HX-Request") == "true"
        template = "503_fragment.html" if htmx else "503.html"
        response = HttpResponse(
            render_to_string(template, {"LANGUAGE_CODE": translation.get_language()}),
            status=503,
        )
        response["Retry-After"] = "10"
        if htmx:
            retarget(response, "#work")
            reswap(response, "afterbegin")
        return response
