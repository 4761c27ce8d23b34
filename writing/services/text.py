"""Text typed by writers and staff, as it is stored, and the limits it must keep."""

from django.utils.translation import gettext as _

from .errors import WritingError

SAMPLE_MAX_CHARS = 2000
# The form asks for about 80 characters; a quarter of that is the least staff can judge
# a voice by ("hi" is not a sample).
SAMPLE_MIN_CHARS = 20
NOTE_MAX_CHARS = 2000


def clean_text(value, *, limit: int, field: str, min_chars: int = 1) -> str:
    """Typed text as stored, or WritingError. NUL characters are refused rather than
    dropped: they never come from a keyboard, so the text is not what the person meant."""
    text = str(value if value is not None else "")
    if "\x00" in text:
        raise WritingError(
            "nul", _("%(field)s contains a NUL character; nothing was saved.") % {"field": field}
        )
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise WritingError("empty", _("%(field)s is empty; nothing was saved.") % {"field": field})
    if len(text) < min_chars:
        raise WritingError(
            "too_short",
            _("%(field)s needs at least %(min)d characters; it has %(n)d. Nothing was saved.")
            % {"field": field, "min": min_chars, "n": len(text)},
        )
    if len(text) > limit:
        raise WritingError(
            "too_long",
            _("%(field)s may have at most %(max)d characters; it has %(n)d. Nothing was saved.")
            % {"field": field, "max": limit, "n": len(text)},
        )
    return text
