"""Small helpers shared by the annotation models."""

import secrets

from django.utils.translation import get_language


def new_token() -> str:
    """Opaque, unguessable, non-sequential: safe to put in an annotator's URL."""
    return secrets.token_urlsafe(16)


def localized(zh: str, en: str) -> str:
    return en if (get_language() or "").startswith("en") and en else zh
