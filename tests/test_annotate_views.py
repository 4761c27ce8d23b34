"""The annotator's pages: who may see what, htmx fragments, plain posts, errors in place."""

import re

import pytest
from django.contrib.auth import get_user_model

from annotation import services
from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import Assignment, ItemKind, Judgment
from dialogues.models import Source
from tests.factories import UserFactory, lease_pair

pytestmark = pytest.mark.django_db

User = get_user_model()


def complete_form(value="4", preference="a"):
    form = {f"{p}-{slug}": value for p in "ab" for slug in PAIR_METRIC_SLUGS}
    form["preference"] = preference
    return form


# Who may see what ----------------------------------------------------------------------


@pytest.fixture
def personas(alice, carol, luffy):
    """anonymous, unapproved, approved for another character, approved, staff."""
    unapproved = UserFactory(email="newbie@example.com")
    services.consent_give(user=unapproved)
    services.characters_claim(user=unapproved, characters=[luffy])
    staff = UserFactory(email="staff@example.com", is_staff=True)
    return {
        "anonymous": None,
        "unapproved": unapproved,
        "other_character": carol,
        "approved": alice,
        "staff": staff,
    }


def client_for(client, user):
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize(
    "persona,expected",
    [
        ("anonymous", "login"),
        ("unapproved", "screening"),
        ("staff", "screening"),
        ("other_character", 403),
        ("approved", 200),
    ],
)
def test_the_item_page_permission_matrix(client, personas, persona, expected):
    lease = lease_pair(personas["approved"])
    url = f"/annotate/{lease.token}/"
    client = client_for(client, personas[persona])

    get = client.get(url)
    post = client.post(url, complete_form())

    if expected == "login":
        assert get.status_code == post.status_code == 302
        assert "/accounts/login/" in get["Location"]
    elif expected == "screening":
        assert get.status_code == post.status_code == 302
        assert get["Location"] == "/screening/"
    elif expected == 403:
        # Another annotator's item looks exactly like one that does not exist.
        assert get.status_code == post.status_code == 404
    else:
        assert get.status_code == 200
        assert post.status_code == 302
    expected_judgments = 1 if expected == 200 else 0
    assert Judgment.objects.count() == expected_judgments


@pytest.mark.parametrize(
    "persona,expected",
    [("anonymous", "/accounts/login/"), ("unapproved", "/screening/"), ("staff", "/screening/")],
)
def test_annotate_sends_people_who_may_not_rate_elsewhere(client, personas, persona, expected):
    response = client_for(client, personas[persona]).get("/annotate/")

    assert response.status_code == 302
    assert response["Location"].startswith(expected)


def test_annotate_sends_an_approved_annotator_to_an_item_of_their_character(client, alice, luffy):
    client.force_login(alice)

    response = client.get("/annotate/", follow=True)

    assert response.status_code == 200
    assert luffy.name_zh in response.content.decode()
    assert re.search(r"/annotate/[\w-]{20,}/$", response.redirect_chain[-1][0])


def test_skip_of_another_annotators_item_is_not_found(client, alice, bob):
    lease = lease_pair(alice)
    client.force_login(bob)

    response = client.post(f"/annotate/{lease.token}/skip/", {"reason": "other"})

    assert response.status_code == 404
    lease.refresh_from_db()
    assert lease.state == "active"


# Submitting ----------------------------------------------------------------------------


def test_a_plain_post_records_the_judgment_and_redirects(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(f"/annotate/{lease.token}/", complete_form())

    assert response.status_code == 302 and response["Location"] == "/annotate/"
    assert Judgment.objects.get().ratings.count() == 18


def test_an_htmx_post_swaps_in_the_next_item(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html, "an htmx response is a fragment"
    next_lease = Assignment.objects.filter(annotator=alice, state="active").get()
    assert response["HX-Push-Url"] == f"/annotate/{next_lease.token}/"
    assert next_lease.token in html
    assert "Done 1 of" in html


def test_a_double_click_makes_one_judgment(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    client.post(f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"})
    second = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert second.status_code == 200
    assert "already submitted" in second.content.decode()
    assert Judgment.objects.count() == 1


@pytest.mark.parametrize(
    "change,message",
    [
        ({"a-fluency": "7"}, "Ratings must be whole numbers from 1 to 5."),
        ({"a-fluency": "x"}, "Ratings must be whole numbers from 1 to 5."),
        ({"b-emotional_value": ""}, "Please rate every metric for every answer."),
        ({"preference": "z"}, "Choose which answer you prefer, or a tie."),
    ],
)
def test_validation_errors_come_back_in_place_and_keep_the_values(client, alice, change, message):
    lease = lease_pair(alice)
    client.force_login(alice)
    form = {**complete_form(value="3"), **change}

    response = client.post(f"/annotate/{lease.token}/", form, headers={"HX-Request": "true"})

    assert response.status_code == 422
    html = response.content.decode()
    assert message in html
    assert re.search(r'name="a-coherency" value="3" data-key="3" required checked', html)
    assert Judgment.objects.count() == 0


def test_without_htmx_a_validation_error_is_a_full_page(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(f"/annotate/{lease.token}/", {**complete_form(), "a-fluency": "9"})

    assert response.status_code == 422
    assert "<html" in response.content.decode()


def test_a_stale_lease_says_so_and_saves_nothing(client, alice):
    from datetime import timedelta

    from django.utils import timezone

    lease = lease_pair(alice)
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(seconds=5))
    client.force_login(alice)

    response = client.post(f"/annotate/{lease.token}/", complete_form())

    assert response.status_code == 409
    assert "ran out" in response.content.decode()
    assert Judgment.objects.count() == 0


def test_a_skip_needs_a_reason_and_moves_on(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    refused = client.post(
        f"/annotate/{lease.token}/skip/", {"reason": " "}, headers={"HX-Request": "true"}
    )
    skipped = client.post(
        f"/annotate/{lease.token}/skip/", {"reason": "distressing"}, headers={"HX-Request": "true"}
    )

    assert refused.status_code == 422
    assert skipped.status_code == 200
    lease.refresh_from_db()
    assert lease.state == "skipped" and lease.skip_reason == "distressing"


def test_progress_counts_done_and_today(client, alice):
    client.force_login(alice)
    for _ in range(2):
        lease = lease_pair(alice)
        client.post(f"/annotate/{lease.token}/", complete_form())

    html = client.get("/annotate/", follow=True).content.decode()

    assert "today 2" in html
    assert re.search(r"Done 2 of \d+", html)


def test_a_break_is_suggested_after_the_configured_number_of_items(client, alice, study):
    study.break_every_items = 2
    study.save()
    client.force_login(alice)
    for _ in range(2):
        lease = lease_pair(alice)
        client.post(f"/annotate/{lease.token}/", complete_form())

    html = client.get("/annotate/", follow=True).content.decode()

    assert 'data-testid="break"' in html


def test_round_two_shows_each_answers_own_round_one_context(client, alice):
    lease = lease_pair(alice)
    while lease.item.round != 2:
        services.assignment_skip(user=alice, token=lease.token, reason="want round 2")
        lease = lease_pair(alice)
    client.force_login(alice)

    html = client.get(f"/annotate/{lease.token}/").content.decode()

    for slot in lease.item.slots.select_related("answer"):
        own_round_1 = slot.answer.source.answers.get(
            character=lease.item.character, scenario=lease.item.scenario, round=1
        )
        assert own_round_1.text in html
        assert slot.answer.question in html


def test_the_rating_page_is_chinese_by_default(client, alice, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    lease = lease_pair(alice)
    client.force_login(alice)

    html = client.get(
        f"/annotate/{lease.token}/", headers={"Accept-Language": "en-US,en"}
    ).content.decode()

    assert "流畅性" in html and "情绪价值" in html
    assert '<html lang="zh-hans">' in html


def test_english_can_be_chosen(client, alice, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    lease = lease_pair(alice)
    client.force_login(alice)

    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    html = client.get(f"/annotate/{lease.token}/").content.decode()

    assert "Fluency" in html and "Emotional value" in html


# Blinding ------------------------------------------------------------------------------


def source_markers():
    markers = set()
    for source in Source.objects.all():
        markers.add(source.slug.lower())
        markers.add(source.display_name.lower())
    return markers


def assert_blind(response):
    body = response.content.decode().lower()
    headers = " ".join(f"{k}: {v}" for k, v in response.headers.items()).lower()
    for marker in source_markers():
        assert marker not in body, f"{marker!r} appears in an annotator's page"
        assert marker not in headers, f"{marker!r} appears in an annotator's response headers"


def test_no_annotator_facing_response_reveals_a_source(client, demo_dataset, luffy):
    from tests.factories import approved_annotator
    from tests.fixtures.studies import make_study

    make_study(ask_human_guess=True, include_diversity=True)
    frank = approved_annotator("frank@example.com", [luffy])
    client.force_login(frank)
    responses = [client.get("/"), client.get("/screening/"), client.get("/annotate/")]
    for _ in range(30):
        page = client.get("/annotate/", follow=True)
        responses.append(page)
        lease = Assignment.objects.filter(annotator=frank, state="active").first()
        if lease is None:
            break
        responses.append(client.get(f"/annotate/{lease.token}/", headers={"HX-Request": "true"}))
        if lease.item.kind == ItemKind.PAIR:
            responses.append(
                client.post(
                    f"/annotate/{lease.token}/", {"a-fluency": "9"}, headers={"HX-Request": "true"}
                )
            )
            form = {**complete_form(), "guess": "b"}
            responses.append(
                client.post(f"/annotate/{lease.token}/", form, headers={"HX-Request": "true"})
            )
        else:
            responses.append(
                client.post(
                    f"/annotate/{lease.token}/",
                    {"set-diversity": "3"},
                    headers={"HX-Request": "true"},
                )
            )
    for response in responses:
        assert_blind(response)
    # Never the same answer twice: one item per scenario of the demo set.
    assert Judgment.objects.filter(annotator=frank).count() >= 5


def test_item_tokens_are_opaque_and_not_sequential(alice, bob):
    tokens = [services.assignment_next(user=u).token for u in (alice, bob)]

    for token in tokens:
        assert len(token) >= 20 and not token.isdigit()
    assert tokens[0] != tokens[1]


def test_progress_counts_what_the_annotator_can_still_do(client, alice):
    """With the reference design, one pair per scenario: 8 scenarios x 1 character."""
    client.force_login(alice)

    html = client.get("/annotate/", follow=True).content.decode()

    assert "Done 0 of 8" in html
