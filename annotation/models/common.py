"""Small helpers shared by the annotation models."""

import secrets

from django.utils.translation import get_language


def new_token() -> str:
    """Opaque, unguessable, non-sequential: safe to put in an annotator's URL."""
    return secrets.token_urlsafe(16)


# What a spreadsheet reads as the start of a formula (OWASP CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def new_pseudonym() -> str:
    """A token that never starts like a formula, so that an annotator's pseudonym is
    spelled the same in every export format: the CSV formula guard never touches it."""
    while True:
        token = secrets.token_urlsafe(16)
        if not token.startswith(FORMULA_STARTS):
            return token


def localized(zh: str, en: str) -> str:
    return en if (get_language() or "").startswith("en") and en else zh
