"""Every annotator URL, for every kind of visitor."""

import pytest

from annotation import services
from annotation.models import ItemKind, Judgment
from tests.builders import UserFactory

pytestmark = pytest.mark.django_db

LOGIN = "login"
SCREENING = "screening"


@pytest.fixture
def world(alice, carol, luffy):
    """alice's live lease on a Luffy pair, and one visitor of each kind."""
    lease = services.assignment_next(user=alice)
    while lease.item.kind != ItemKind.PAIR:
        services.assignment_skip(user=alice, token=lease.token, reason="pairs only")
        lease = services.assignment_next(user=alice)
    unapproved = UserFactory(email="unapproved@example.com")
    services.consent_give(user=unapproved)
    services.characters_claim(user=unapproved, characters=[luffy])
    staff = UserFactory(email="staff@example.com", is_staff=True)
    return {
        "lease": lease,
        "luffy": luffy,
        "visitors": {
            "anonymous": None,
            "unapproved": unapproved,
            "other_character": carol,
            "approved": alice,
            "staff": staff,
        },
    }


# (method, url template) -> expected outcome per visitor.
MATRIX = {
    ("get", "/annotate/"): {
        "anonymous": LOGIN,
        "unapproved": SCREENING,
        "staff": SCREENING,
        "other_character": 302,
        "approved": 302,
    },
    ("get", "/annotate/{token}/"): {
        "anonymous": LOGIN,
        "unapproved": SCREENING,
        "staff": SCREENING,
        "other_character": 404,
        "approved": 200,
    },
    ("post", "/annotate/{token}/"): {
        "anonymous": LOGIN,
        "unapproved": SCREENING,
        "staff": SCREENING,
        "other_character": 404,
        "approved": 422,
    },
    ("post", "/annotate/{token}/skip/"): {
        "anonymous": LOGIN,
        "unapproved": SCREENING,
        "staff": SCREENING,
        "other_character": 404,
        "approved": 422,
    },
    ("get", "/screening/"): {
        "anonymous": LOGIN,
        "unapproved": 200,
        "staff": 302,
        "other_character": 200,
        "approved": 200,
    },
    ("get", "/screening/consent/"): {
        "anonymous": LOGIN,
        "unapproved": 200,
        "staff": 200,
        "other_character": 200,
        "approved": 200,
    },
    ("get", "/screening/characters/"): {
        "anonymous": LOGIN,
        "unapproved": 200,
        "staff": 302,
        "other_character": 200,
        "approved": 200,
    },
    ("get", "/screening/quiz/{character}/"): {
        # Only someone who claimed the character and has not passed yet takes its quiz.
        "anonymous": LOGIN,
        "unapproved": 200,
        "staff": 404,
        "other_character": 404,
        "approved": 302,
    },
}

CASES = [
    (method, url, visitor, expected)
    for (method, url), row in MATRIX.items()
    for visitor, expected in row.items()
]


@pytest.mark.parametrize(
    "method,url,visitor,expected", CASES, ids=[f"{m} {u} as {v}" for m, u, v, _ in CASES]
)
def test_annotator_urls_answer_each_visitor_as_they_should(
    client, world, method, url, visitor, expected
):
    user = world["visitors"][visitor]
    if user is not None:
        client.force_login(user)
    path = url.format(token=world["lease"].token, character=world["luffy"].pk)

    # An empty POST is an incomplete form: refused for the owner, and nothing is written.
    response = getattr(client, method)(path, {} if method == "post" else None)

    if expected == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    elif expected == SCREENING:
        assert response.status_code == 302 and response["Location"] == "/screening/"
    else:
        assert response.status_code == expected
    assert Judgment.objects.count() == 0
    world["lease"].refresh_from_db()
    assert world["lease"].state == "active"
