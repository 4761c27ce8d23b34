"""Places where a page of one app shows a section another app adds, without importing it:
the staff screening page lists writer applications, yet `annotation` knows nothing of fan
writing. The app that adds a section registers it when it starts (`AppConfig.ready`); the
page's view renders whatever is registered for it."""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

_registered: dict[str, list[tuple[str, Callable[[HttpRequest], dict[str, Any]]]]] = {}


def section_add(
    page: str, *, template: str, context: Callable[[HttpRequest], dict[str, Any]]
) -> None:
    """Show `template`, with what `context(request)` returns, on `page`. Adding the same
    template twice (a reloaded app) keeps one."""
    sections = _registered.setdefault(page, [])
    sections[:] = [(t, c) for t, c in sections if t != template]
    sections.append((template, context))


def sections_of(page: str, request: HttpRequest) -> list[SafeString]:
    """The sections other apps add to `page`, rendered, in the order they were added."""
    return [
        SafeString(render_to_string(template, context(request), request=request))
        for template, context in _registered.get(page, [])
    ]
