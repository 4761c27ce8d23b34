from typing import Any

from rest_framework import renderers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's browsable pages without the inline <style> of its code highlighting, which
    the site's Content Security Policy (style-src 'self') refuses, so a researcher's
    browser logs no violation; the API's descriptions are plain text anyway."""

    def get_context(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context(*args, **kwargs)
        context["code_style"] = None
        return context
