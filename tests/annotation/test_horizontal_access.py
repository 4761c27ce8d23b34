"""Horizontal access: annotator A, holding B's tokens and ids, can neither read nor change
B's items, judgments or ratings, nor reach unblinded data, through any URL or the API."""

import pytest

from annotation import services
from annotation.models import Assignment, Item, Judgment, Rating
from tests.builders import lease_pair
from tests.helpers import assert_blind, complete_form, pair_submission

pytestmark = pytest.mark.django_db

NOT_FOUND = 404
FORBIDDEN = 403
ADMIN_LOGIN = "admin login"


@pytest.fixture
def world(alice, bob, study):
    """bob has a submitted item, a skipped one and a live lease; alice has her own lease."""
    done = lease_pair(bob)
    services.judgment_submit(
        user=bob, token=done.token, submission=pair_submission(comment="bob's private note")
    )
    skipped = lease_pair(bob)
    services.assignment_skip(user=bob, token=skipped.token, reason="unfamiliar")
    active = lease_pair(bob)
    return {
        "alice_lease": lease_pair(alice),
        "tokens": {"active": active.token, "submitted": done.token, "skipped": skipped.token},
        "judgment": Judgment.objects.get(assignment=done),
        "study": study,
    }


def snapshot():
    return {
        "judgments": sorted(
            Judgment.objects.values_list("pk", "annotator_id", "assignment_id", "comment")
        ),
        "ratings": sorted(Rating.objects.values_list("pk", "judgment_id", "value")),
        "assignments": sorted(Assignment.objects.values_list("pk", "annotator_id", "state")),
        "items": sorted(Item.objects.values_list("pk", "judgment_count")),
    }


# Bob's item URLs, used by alice: every one looks like a token that does not exist.
ITEM_REQUESTS = [
    ("get", "/annotate/{token}/", {}),
    ("get", "/annotate/{token}/", {"HX-Request": "true"}),
    ("post", "/annotate/{token}/", {}),
    ("post", "/annotate/{token}/", {"HX-Request": "true"}),
    ("post", "/annotate/{token}/skip/", {}),
    ("post", "/annotate/{token}/skip/", {"HX-Request": "true"}),
]
ITEM_CASES = [
    (method, url, headers, kind)
    for method, url, headers in ITEM_REQUESTS
    for kind in ("active", "submitted", "skipped")
]


@pytest.mark.parametrize(
    "method,url,headers,kind",
    ITEM_CASES,
    ids=[f"{m} {u} {'htmx ' if h else ''}{k}" for m, u, h, k in ITEM_CASES],
)
def test_an_annotator_cannot_use_another_annotators_item(
    client, world, alice, method, url, headers, kind
):
    before = snapshot()
    client.force_login(alice)
    path = url.format(token=world["tokens"][kind])
    data = {**complete_form(), "reason": "other"} if method == "post" else None

    response = getattr(client, method)(path, data, headers=headers)

    assert response.status_code == NOT_FOUND
    assert "bob" not in response.content.decode().lower()
    assert snapshot() == before


def api_urls(world):
    judgment = world["judgment"]
    rating = judgment.ratings.first()
    slug = world["study"].slug
    return [
        "/api/v1/sources/",
        "/api/v1/sources/human/",
        "/api/v1/characters/",
        "/api/v1/scenarios/",
        "/api/v1/scenarios/1/",
        "/api/v1/answers/",
        f"/api/v1/answers/{rating.answer_id}/",
        "/api/v1/studies/",
        f"/api/v1/studies/{slug}/",
        f"/api/v1/studies/{slug}/results/",
        f"/api/v1/studies/{slug}/export/",
        "/api/v1/items/",
        f"/api/v1/items/{judgment.item_id}/",
        "/api/v1/judgments/",
        f"/api/v1/judgments/{judgment.pk}/",
        f"/api/v1/judgments/?study={slug}",
        "/api/v1/ratings/",
        f"/api/v1/ratings/{rating.pk}/",
    ]


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete"])
def test_an_annotator_gets_nothing_from_the_api(client, world, alice, method):
    before = snapshot()
    client.force_login(alice)

    for url in api_urls(world):
        response = getattr(client, method)(url, {}, content_type="application/json")

        assert response.status_code == FORBIDDEN, url
        assert b"private note" not in response.content
    assert snapshot() == before


def test_an_annotator_cannot_read_results_exports_or_the_admin(client, world, alice):
    before = snapshot()
    client.force_login(alice)
    slug = world["study"].slug
    judgment = world["judgment"]

    for url in ("/results/", f"/results/{slug}/", f"/results/{slug}/?round=1"):
        assert client.get(url).status_code == FORBIDDEN, url
    assert client.post(f"/results/{slug}/refresh/").status_code == FORBIDDEN
    for url in (
        "/admin/",
        "/admin/annotation/judgment/",
        f"/admin/annotation/judgment/{judgment.pk}/change/",
        "/admin/annotation/assignment/",
        "/admin/dialogues/answer/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"], url
    assert snapshot() == before


def test_an_annotators_own_pages_reveal_nobody_elses_tokens_or_any_source(client, world, alice):
    client.force_login(alice)
    own = world["alice_lease"].token

    responses = [
        client.get("/"),
        client.get("/annotate/", follow=True),
        client.get(f"/annotate/{own}/"),
        client.get(f"/annotate/{own}/", headers={"HX-Request": "true"}),
        client.post(f"/annotate/{own}/", {"a-fluency": "9"}, headers={"HX-Request": "true"}),
        client.get("/screening/"),
    ]

    for response in responses:
        body = response.content.decode()
        for token in world["tokens"].values():
            assert token not in body
        assert "private note" not in body
        assert_blind(response)
