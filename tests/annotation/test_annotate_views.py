"""The annotator's pages: who may see what, htmx fragments, plain posts, errors in place."""

import re

import pytest
from django.contrib.auth import get_user_model

from annotation import services
from annotation.models import Assignment, ItemKind, Judgment
from dialogues.models import Source
from tests.builders import UserFactory, lease_pair
from tests.helpers import assert_blind, complete_form

pytestmark = pytest.mark.django_db

User = get_user_model()


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


def test_going_back_to_a_submitted_item_leads_to_the_next_one_with_a_note(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)
    client.post(f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"})

    response = client.get(f"/annotate/{lease.token}/", follow=True)

    next_lease = Assignment.objects.filter(annotator=alice, state="active").get()
    assert response.redirect_chain[-1][0] == f"/annotate/{next_lease.token}/"
    html = response.content.decode()
    assert "You already submitted that item." in html
    assert f'action="/annotate/{lease.token}/"' not in html
    assert Judgment.objects.filter(assignment=lease).count() == 1


def test_the_rating_pages_are_never_cached(client, alice):
    """Back or a reload must ask the server, which knows what was submitted."""
    lease = lease_pair(alice)
    client.force_login(alice)

    for path in ("/annotate/", f"/annotate/{lease.token}/"):
        assert "no-store" in client.get(path)["Cache-Control"], path


def test_the_site_icon_is_served(client):
    response = client.get("/favicon.ico", follow=True)

    assert response.status_code == 200
    assert b"".join(response.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file


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
    # The replay is shown the item the first click was given, not yet another one.
    following = Assignment.objects.get(annotator=alice, state="active")
    assert following.token in second.content.decode()


def test_after_a_submission_a_lease_held_in_another_tab_comes_next(client, alice):
    """Two tabs asking at the same moment can each be given a lease. Submitting one of
    them serves the other, the older live lease, instead of leasing a third item."""
    first = lease_pair(alice)
    other_tab = services.assignment_next(user=alice, known_without_lease=True)
    assert other_tab is not None and other_tab.pk != first.pk
    client.force_login(alice)

    response = client.post(
        f"/annotate/{first.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    assert other_tab.token in response.content.decode()
    assert list(
        Assignment.objects.filter(annotator=alice, state="active").values_list("pk", flat=True)
    ) == [other_tab.pk]


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

    response = client.post(f"/annotate/{lease.token}/", complete_form(), follow=True)

    assert response.redirect_chain[0] == ("/annotate/", 302)
    assert "ran out" in response.content.decode()
    assert Judgment.objects.count() == 0


def _lease_run_out(alice):
    from datetime import timedelta

    from django.utils import timezone

    lease = lease_pair(alice)
    Assignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(seconds=5))
    return lease


def test_ratings_sent_after_the_lease_ran_out_are_refused_above_the_next_item(client, alice):
    stale = _lease_run_out(alice)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{stale.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    page = response.content.decode()
    assert response.status_code == 409
    assert "ran out" in page
    assert "Nothing to rate right now" not in page
    following = Assignment.objects.get(
        annotator=alice, state="active", expires_at__gt=stale.expires_at
    )
    assert f"/annotate/{following.token}/" in page
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize(
    ("status", "message", "draft"),
    [
        ("paused", "This study is paused: ratings cannot be sent until it reopens.", "keep"),
        ("closed", "This study is not open any more.", None),
    ],
)
def test_ratings_sent_to_a_study_no_longer_open_say_whether_the_item_may_come_back(
    client, alice, status, message, draft
):
    """The page keeps the draft of an item that may come back (a paused study reopens)
    and drops it otherwise: the response tells them apart (`Rating-Draft`)."""
    lease = lease_pair(alice)
    services.study_set_status(study=lease.item.study, status=status)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 409
    assert message in response.content.decode()
    assert response.headers.get("Rating-Draft") == draft
    assert Judgment.objects.count() == 0


def test_a_full_page_whose_lease_ran_out_goes_to_the_next_item_and_says_why(client, alice):
    stale = _lease_run_out(alice)
    client.force_login(alice)

    shown = client.get(f"/annotate/{stale.token}/", follow=True)
    sent = client.post(f"/annotate/{stale.token}/", complete_form())

    assert "ran out" in shown.content.decode()
    assert shown.redirect_chain[0][0] == "/annotate/"
    assert sent.status_code == 302 and sent.url == "/annotate/"
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
    assert "Skipped: that item will not come back to you." in skipped.content.decode()
    lease.refresh_from_db()
    assert lease.state == "skipped" and lease.skip_reason == "distressing"


@pytest.mark.parametrize("allowed", [0, 1])
def test_a_skip_beyond_the_members_allowance_is_refused_and_the_item_stays(
    client, alice, study, allowed
):
    services.membership_add(study=study, annotator=alice, actor=None, skips_allowed=allowed)
    client.force_login(alice)
    for _ in range(allowed):
        lease = services.assignment_next(user=alice)
        client.post(f"/annotate/{lease.token}/skip/", {"reason": "distressing"})
    lease = services.assignment_next(user=alice)

    refused = client.post(
        f"/annotate/{lease.token}/skip/", {"reason": "distressing"}, headers={"HX-Request": "true"}
    )

    assert refused.status_code == 422
    page = refused.content.decode()
    assert (
        "You may skip 1 item in this study and have done so: please rate this one." in page
        if allowed
        else "This study asks you to rate every item: it cannot be skipped." in page
    )
    assert f"/annotate/{lease.token}/" in page  # the same item, to rate
    lease.refresh_from_db()
    assert lease.state == "active" and lease.skip_reason == ""
    assert Assignment.objects.filter(annotator=alice, state="skipped").count() == allowed


def test_the_rating_page_counts_down_the_skips_and_drops_the_skip_once_none_are_left(
    client, alice, study
):
    services.membership_add(study=study, annotator=alice, actor=None, skips_allowed=2)
    client.force_login(alice)
    pages = []
    for _ in range(3):
        lease = services.assignment_next(user=alice)
        pages.append(client.get(f"/annotate/{lease.token}/").content.decode())
        client.post(f"/annotate/{lease.token}/skip/", {"reason": "distressing"})

    assert "Skip this item (2 skips left)" in pages[0]
    assert "Skip this item (1 skip left)" in pages[1]
    assert "/skip/" not in pages[2]
    assert "No skips are left to you in this study: please rate this item." in pages[2]


def test_an_annotator_without_a_skip_limit_sees_the_skip_without_a_count(client, alice, study):
    services.membership_add(study=study, annotator=alice, actor=None)
    client.force_login(alice)
    lease = services.assignment_next(user=alice)

    page = client.get(f"/annotate/{lease.token}/").content.decode()

    assert "Skip this item</summary>" in page and "skips left" not in page
    assert f"/annotate/{lease.token}/skip/" in page


def test_a_skip_without_htmx_says_so_on_the_next_page(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    page = client.post(
        f"/annotate/{lease.token}/skip/", {"reason": "distressing"}, follow=True
    ).content.decode()

    assert "Skipped: that item will not come back to you." in page


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


def annotator_responses(client, annotator) -> list:
    """Everything an annotator's browser receives while working through a study."""
    client.force_login(annotator)
    responses = [client.get("/"), client.get("/screening/"), client.get("/annotate/")]
    for _ in range(30):
        page = client.get("/annotate/", follow=True)
        responses.append(page)
        lease = Assignment.objects.filter(annotator=annotator, state="active").first()
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
    return responses


def test_no_annotator_facing_response_reveals_a_source(client, demo_dataset, luffy):
    from tests.builders import approved_annotator, make_study

    make_study(ask_human_guess=True, include_diversity=True)
    frank = approved_annotator("frank@example.com", [luffy])
    responses = annotator_responses(client, frank)
    for response in responses:
        assert_blind(response)
    # Never the same answer twice: one item per scenario of the demo set.
    assert Judgment.objects.filter(annotator=frank).count() >= 5


@pytest.mark.django_db(transaction=True)
def test_a_generated_source_reveals_neither_endpoint_nor_model_nor_prompt(
    client, demo_dataset, luffy, chat_server, monkeypatch
):
    """A source collected through an API is as blind as an imported one: its endpoint's
    name, address and model, the prompts and the call figures stay on the staff side."""
    import io

    from django.core.management import call_command

    from collection.models import CharacterPrompt, GeneratedAnswer, ModelEndpoint
    from tests.builders import approved_annotator

    monkeypatch.setenv("BLIND_TEST_KEY", "sk-blind")
    CharacterPrompt.objects.create(
        character=luffy, version=1, template="你是{name}。PROMPTMARKER-ZETA"
    )
    call_command(
        "collect_answers",
        "--source", "hushed-llm",
        "--base-url", chat_server.url,
        "--model", "hushmodel-9b-chat",
        "--api-key-env", "BLIND_TEST_KEY",
        "--simulator-base-url", chat_server.url,
        "--simulator-model", "simulatorzeta",
        "--simulator-api-key-env", "BLIND_TEST_KEY",
        "--characters", luffy.key,
        "--scenarios", "1-2,16-17,31-32,46-47",
        stdout=io.StringIO(),
    )  # fmt: skip
    assert GeneratedAnswer.objects.filter(answer__isnull=False).count() == 16
    # Compared with the fans alone, so every pair shows a generated answer.
    study = services.study_create(
        name="Generated",
        reference=Source.objects.get(slug="human"),
        compared=[Source.objects.get(slug="hushed-llm")],
        characters=[luffy],
        rounds=(1, 2),
        overlap=3,
        include_diversity=True,
        ask_human_guess=True,
    )
    services.study_open(study=study)
    frank = approved_annotator("frank@example.com", [luffy])

    responses = annotator_responses(client, frank)

    endpoint = ModelEndpoint.objects.get(source_slug="hushed-llm")
    port = chat_server.url.rsplit(":", 1)[1].split("/")[0]
    secrets = [
        "hushmodel",
        "simulatorzeta",
        "promptmarker",
        endpoint.name.lower(),
        port,
        "sk-blind",
    ]
    for response in responses:
        assert_blind(response)
        body = response.content.decode().lower()
        for secret in secrets:
            assert secret not in body, f"{secret!r} appears in an annotator's page"
    shown = " ".join(r.content.decode() for r in responses)
    assert any(g.text in shown for g in GeneratedAnswer.objects.all())
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


# An answer tells the truth -------------------------------------------------------------


@pytest.mark.parametrize("failure", [RuntimeError("bug"), "database"])
def test_a_saved_judgment_says_saved_even_when_the_next_item_fails(
    client, alice, monkeypatch, failure
):
    from django.db import OperationalError

    lease = lease_pair(alice)
    client.force_login(alice)
    error = OperationalError("connection lost") if failure == "database" else failure

    def next_item_fails(**_kwargs):
        # The judgment is committed by now: the failure comes after the save.
        assert Judgment.objects.filter(assignment=lease).exists()
        raise error

    monkeypatch.setattr(services, "assignment_next", next_item_fails)
    response = client.post(
        f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="saved"' in html and "Your ratings are saved." in html
    assert 'href="/annotate/"' in html, "a link to fetch the next item again"
    assert "could not reach its database" not in html
    assert Judgment.objects.get().ratings.count() == 18


def test_a_refused_submission_saves_nothing_and_never_says_saved(client, alice):
    lease = lease_pair(alice)
    client.force_login(alice)

    response = client.post(
        f"/annotate/{lease.token}/",
        {**complete_form(), "a-fluency": "9"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 422
    assert 'data-testid="saved"' not in response.content.decode()
    assert Judgment.objects.count() == 0
