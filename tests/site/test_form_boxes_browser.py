"""The staff start forms in a real browser (Debian's Chromium via Playwright): a box typed
into (a number of pairs, a list of scenarios) looks like the lists beside it."""

import pytest

from collection.models import ModelEndpoint
from tests.builders import UserFactory
from tests.fixtures.browser import session_cookie

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOOKS = [
    "border-top-width",
    "border-top-style",
    "border-top-color",
    "border-radius",
    "padding-left",
    "padding-top",
    "font-family",
    "font-size",
]
LOOK_OF = """element => {
  const style = getComputedStyle(element);
  return Object.fromEntries(%s.map(name => [name, style.getPropertyValue(name)]));
}"""


@pytest.mark.parametrize(
    "path, box, beside",
    [
        ("/staff/judges/", "#items", "#study"),
        ("/staff/collection/", "#scenarios", "#endpoint"),
    ],
)
def test_a_start_forms_number_box_looks_like_its_lists(live_server, new_page, path, box, beside):
    # The start forms are shown once there is an endpoint to start with.
    ModelEndpoint.objects.create(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    admin = UserFactory(email="admin@example.com", is_staff=True, is_superuser=True)
    page = new_page()
    page.context.add_cookies([session_cookie(live_server, admin)])
    page.goto(f"{live_server.url}{path}")

    look = LOOK_OF % LOOKS
    assert page.locator(box).evaluate(look) == page.locator(beside).evaluate(look)
