"""Every user-facing string has a Simplified Chinese translation."""

import re
from pathlib import Path

import pytest

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES"


def entries(po_text):
    """(msgid, msgstr) pairs of a .po file written without line wrapping."""
    return re.findall(
        r'^msgid "(.+)"\n(?:msgid_plural ".*"\n)?msgstr(?:\[0\])? "(.*)"$', po_text, re.M
    )


def test_every_string_is_translated_to_chinese():
    pairs = entries((LOCALE / "django.po").read_text(encoding="utf-8"))

    assert len(pairs) > 100
    untranslated = [msgid for msgid, msgstr in pairs if not msgstr]
    assert untranslated == []
    # Fuzzy entries are guesses by makemessages that compilemessages leaves out.
    assert "#, fuzzy" not in (LOCALE / "django.po").read_text(encoding="utf-8")


def test_the_compiled_catalogue_is_newer_than_its_source():
    assert (LOCALE / "django.mo").stat().st_size > 0
    assert (LOCALE / "django.mo").stat().st_mtime >= (LOCALE / "django.po").stat().st_mtime - 1


@pytest.mark.django_db
def test_the_rating_page_has_no_english_left_in_chinese(client, alice, settings):
    from annotation import services

    settings.LANGUAGE_CODE = "zh-hans"
    lease = services.assignment_next(user=alice)
    client.force_login(alice)

    html = client.get(f"/annotate/{lease.token}/").content.decode()

    for english in ("Submit and next", "Skip this item", "Comment (optional)", "Done ", "Keyboard"):
        assert english not in html
    assert "提交并继续" in html
