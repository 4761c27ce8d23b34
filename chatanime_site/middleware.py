from django.conf import settings
from django.utils import translation


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
