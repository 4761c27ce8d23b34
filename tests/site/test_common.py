"""What the apps share (common/): refusals, typed text, whole numbers, safe redirects."""

import pytest
from django.test import RequestFactory

from annotation.services import AnnotationError
from collection.services import CollectionError
from common.errors import Refusal
from common.parsing import whole_number, whole_numbers
from common.redirects import safe_next
from common.text import plain_text
from writing.services import WritingError


@pytest.mark.parametrize("refusal", [AnnotationError, CollectionError, WritingError])
def test_every_apps_refusal_is_one_kind_with_a_code_and_a_message(refusal):
    error = refusal("too_long", "At most 400 characters.")
    assert isinstance(error, Refusal)
    assert (error.code, error.message, str(error)) == (
        "too_long",
        "At most 400 characters.",
        "At most 400 characters.",
    )


def test_typed_text_loses_nul_characters_and_surrounding_space_and_is_cut_to_its_limit():
    assert plain_text("  好\x00的 \n") == "好的"
    assert plain_text(None) == ""
    assert plain_text("路飞" * 10, 3) == "路飞路"


@pytest.mark.parametrize(
    "raw, number",
    [
        ("3", 3),
        ("007", 7),
        ("-3", None),
        ("+3", None),
        ("²", None),
        ("", None),
        (" 3", None),
        (None, None),
        ("3.0", None),
    ],
)
def test_a_whole_number_is_ascii_digits_only(raw, number):
    assert whole_number(raw) == number


def test_whole_numbers_keeps_the_numbers_in_order_and_leaves_out_the_rest():
    assert whole_numbers(["2", "x", "-1", "10"]) == [2, 10]


@pytest.mark.parametrize(
    "posted, expected",
    [
        ("/staff/studies/3/", "/staff/studies/3/"),
        ("/write/staff/", "/fallback/"),  # outside the pages allowed
        ("https://evil.example/staff/", "/fallback/"),
        ("//evil.example/staff/", "/fallback/"),
        ("", "/fallback/"),
    ],
)
def test_a_form_sends_its_user_back_only_to_a_page_of_this_site(posted, expected):
    request = RequestFactory().post("/staff/x/", {"next": posted})
    assert safe_next(request, "/fallback/", within="/staff/") == expected


def test_without_a_prefix_any_page_of_this_site_will_do_but_no_other_host():
    request = RequestFactory().post("/write/x/", {"next": "/write/staff/"})
    assert safe_next(request, "/fallback/") == "/write/staff/"
    request = RequestFactory().post("/write/x/", {"next": "http://testserver.evil/"})
    assert safe_next(request, "/fallback/") == "/fallback/"
