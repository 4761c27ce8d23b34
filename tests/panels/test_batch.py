"""A participant's batch on a study without the quiz, through the pages as a browser
uses them: the panel's link, consent, the characters they know, the instructions, every
item on the real rating page, then the completion page with the one code and the link
back to the panel. Refused steps change nothing; a finished participant gets no second
batch or code."""

from urllib.parse import urlencode

import pytest
from django.urls import reverse

from annotation.models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    Judgment,
    ProfileStatus,
    QualificationStatus,
    StudyMembership,
)
from panels import services
from panels.models import Participant, ParticipantState
from tests.builders import PROLIFIC_PID, make_panel_study, make_study, panel_participant
from tests.helpers import assert_blind, complete_form

pytestmark = pytest.mark.django_db

ITEMS = 3


@pytest.fixture
def panel(study):
    return make_panel_study(study, items_per_participant=ITEMS)


def join(client, panel, pid=PROLIFIC_PID):
    url = reverse("panel-join", args=[panel.study.slug]) + "?" + urlencode({"PROLIFIC_PID": pid})
    return client.get(url)


def start_url(panel):
    return reverse("panel-start", args=[panel.study.slug])


def done_url(panel):
    return reverse("panel-done", args=[panel.study.slug])


def admitted(client, panel, character, pid=PROLIFIC_PID) -> Participant:
    """A participant through the link, consent and the choice of `character`."""
    join(client, panel, pid)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    response = client.post(start_url(panel), {"step": "characters", "characters": [character.pk]})
    assert response.status_code == 302, response.content.decode()
    return Participant.objects.get(pid_hash=services.pid_hash(pid), panel_study=panel)


def rate_one(client) -> str:
    """Ask the rating page for the next item and submit it; the item's study slug."""
    response = client.get(reverse("annotate"))
    assert response.status_code == 302
    item_url = response["Location"]
    assert item_url.startswith("/annotate/"), item_url
    page = client.get(item_url)
    assert page.status_code == 200
    assert_blind(page)
    token = item_url.rstrip("/").rsplit("/", 1)[-1]
    study_slug = Assignment.objects.get(token=token).item.study.slug
    assert client.post(item_url, complete_form()).status_code == 302
    return study_slug


def test_the_whole_batch_from_the_panel_link_to_the_completion_link(client, panel, luffy):
    assert join(client, panel).status_code == 302
    page = client.get(start_url(panel))
    assert page.status_code == 200 and b'name="agree"' in page.content
    assert client.post(start_url(panel), {"step": "consent", "agree": "yes"}).status_code == 302
    page = client.get(start_url(panel))
    assert b'name="characters"' in page.content
    response = client.post(start_url(panel), {"step": "characters", "characters": [luffy.pk]})
    assert response.status_code == 302
    page = client.get(start_url(panel))
    assert page.status_code == 200
    assert reverse("annotate").encode() in page.content
    assert b'data-testid="panel-instructions"' in page.content

    participant = Participant.objects.get()
    profile = AnnotatorProfile.objects.get(user=participant.user)
    assert profile.status == ProfileStatus.APPROVED and profile.members_only
    assert profile.consented_at is not None
    assert list(profile.qualifications.values_list("character_id", "status")) == [
        (luffy.pk, QualificationStatus.APPROVED)
    ]
    membership = StudyMembership.objects.get(annotator=participant.user)
    assert membership.study == panel.study and membership.cap == ITEMS
    assert list(membership.characters.values_list("pk", flat=True)) == [luffy.pk]

    for _ in range(ITEMS):
        assert rate_one(client) == panel.study.slug
    assert Judgment.objects.filter(annotator=participant.user).count() == ITEMS

    response = client.get(reverse("annotate"))
    assert response.status_code == 302 and response["Location"] == done_url(panel)
    done = client.get(done_url(panel))
    assert done.status_code == 200
    body = done.content.decode()
    assert "C1A2B3" in body
    assert "https://app.prolific.com/submissions/complete?cc=C1A2B3" in body
    assert_blind(done)
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert participant.finished_at is not None


def test_back_to_an_old_item_after_the_batch_shows_the_code_and_no_next_item(client, panel, luffy):
    admitted(client, panel, luffy)
    for _ in range(ITEMS):
        rate_one(client)
    client.get(done_url(panel))
    last = Assignment.objects.latest("pk")

    again = client.get(reverse("annotate-item", args=[last.token]), follow=True)

    assert again.redirect_chain[-1][0] == done_url(panel)
    body = again.content.decode()
    assert "C1A2B3" in body
    assert "next one" not in body and "already submitted" not in body


def test_a_completed_participant_never_gets_a_second_batch_or_code(client, panel, luffy):
    participant = admitted(client, panel, luffy)
    for _ in range(ITEMS):
        rate_one(client)
    client.get(done_url(panel))
    leases = Assignment.objects.filter(annotator=participant.user).count()

    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    assert join(client, panel).status_code == 302
    assert client.get(start_url(panel))["Location"] == done_url(panel)
    again = services.participant_complete(participant=participant)
    assert again.code == "C1A2B3"
    assert client.get(done_url(panel)).content.decode().count("C1A2B3") >= 1
    assert Assignment.objects.filter(annotator=participant.user).count() == leases
    assert Participant.objects.count() == 1


def test_no_character_chosen_is_refused_with_the_field_named(client, panel):
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    response = client.post(start_url(panel), {"step": "characters"})
    assert response.status_code == 422
    assert "Characters" in response.content.decode()
    assert not StudyMembership.objects.exists()


def test_a_character_not_in_the_study_is_refused(client, demo_dataset, luffy, natsume):
    study = make_study(characters=[luffy])
    panel = make_panel_study(study, items_per_participant=ITEMS)
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    response = client.post(start_url(panel), {"step": "characters", "characters": [natsume.pk]})
    assert response.status_code == 422
    assert "Characters" in response.content.decode()
    assert not StudyMembership.objects.exists()
    participant = Participant.objects.get()
    with pytest.raises(services.PanelError):
        services.participant_admit(participant=participant, characters=[natsume])
    assert not StudyMembership.objects.exists()
    assert AnnotatorProfile.objects.get(user=participant.user).status != ProfileStatus.APPROVED


def test_characters_before_consent_are_not_taken(client, panel, luffy):
    join(client, panel)
    response = client.post(start_url(panel), {"step": "characters", "characters": [luffy.pk]})
    assert response.status_code == 200 and b'name="agree"' in response.content
    response = client.post(start_url(panel), {"step": "consent"})
    assert response.status_code == 422
    assert not StudyMembership.objects.exists()


def test_a_completion_code_requested_before_the_last_item_is_refused(client, panel, luffy):
    participant = admitted(client, panel, luffy)
    rate_one(client)
    with pytest.raises(services.PanelError) as refused:
        services.participant_complete(participant=participant)
    assert refused.value.code == "not_done"
    response = client.get(done_url(panel))
    assert response.status_code == 409
    assert "1 of 3" in response.content.decode()
    assert "C1A2B3" not in response.content.decode()
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.STARTED, "")


def test_a_quiz_study_admits_no_one_by_choosing_characters_alone(client, study, luffy):
    """Its path is the quiz (tests/panels/test_quiz.py)."""
    panel = make_panel_study(study, quiz=True)
    join(client, panel)
    page = client.get(start_url(panel))
    assert page.status_code == 200 and b'name="agree"' in page.content
    participant = Participant.objects.get()
    services.participant_consent(participant=participant)
    with pytest.raises(services.PanelError) as refused:
        services.participant_admit(participant=participant, characters=[luffy])
    assert refused.value.code == "quiz"


def test_another_participants_and_other_peoples_pages_are_not_found(
    client, panel, luffy, alice, demo_dataset
):
    other = make_panel_study(make_study(), items_per_participant=ITEMS)
    panel_participant(other, pid="someone-else")
    admitted(client, panel, luffy)
    for url in (start_url(other), done_url(other)):
        assert client.get(url).status_code == 404
    client.force_login(alice)
    for url in (start_url(panel), done_url(panel)):
        assert client.get(url).status_code == 404


def test_a_participant_rates_only_the_panel_study(client, panel, luffy, demo_dataset):
    open_to_all = make_study(characters=[luffy])
    assert not open_to_all.memberships.exists()
    participant = admitted(client, panel, luffy)
    slugs = {rate_one(client) for _ in range(ITEMS)}
    assert slugs == {panel.study.slug}
    assert not Assignment.objects.filter(
        annotator=participant.user, item__study=open_to_all
    ).exists()
    # Their cap reached, the study open to everyone still has work: none of it is theirs.
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)


def test_time_out_frees_leases_and_gives_no_code(client, panel, luffy, monkeypatch):
    from django.utils import timezone

    participant = admitted(client, panel, luffy)
    rate_one(client)
    item_url = client.get(reverse("annotate"))["Location"]
    lease = Assignment.objects.get(annotator=participant.user, state=AssignmentState.ACTIVE)

    later = participant.deadline + (participant.deadline - participant.started_at) / 60
    monkeypatch.setattr(timezone, "now", lambda: later)
    response = client.get(reverse("annotate"))
    assert response["Location"] == done_url(panel)
    page = client.get(done_url(panel))
    assert page.status_code == 200 and b'data-testid="panel-timed-out"' in page.content
    participant.refresh_from_db()
    assert participant.state == ParticipantState.TIMED_OUT and participant.code == ""
    lease.refresh_from_db()
    assert lease.state == AssignmentState.EXPIRED
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    assert client.post(item_url, complete_form()).status_code in (302, 409)
    assert Judgment.objects.filter(annotator=participant.user).count() == 1
    assert not Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()
    # Noticed on the participant's own request or by the beat job, a time-out is on record.
    from annotation.models import AuditAction, AuditEvent

    event = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert event.after == {"state": "timed_out"} and event.note.startswith("deadline")


def test_time_out_is_refused_before_the_deadline(panel, luffy):
    participant = panel_participant(panel)
    with pytest.raises(services.PanelError):
        services.participant_time_out(participant=participant)
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED


def test_the_batch_pages_read_in_chinese(client, panel, luffy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    refused = client.post(start_url(panel), {"step": "characters"}).content.decode()
    assert "角色：请至少选择一个你了解的角色。" in refused
    client.post(start_url(panel), {"step": "characters", "characters": [luffy.pk]})
    ready = client.get(start_url(panel)).content.decode()
    assert "如何评测" in ready and "How to rate" not in ready
    early = client.get(done_url(panel)).content.decode()
    assert "你已评测 3 项中的 0 项" in early


def test_the_progress_line_counts_exactly_the_batch(client, panel, luffy):
    """Told "3 pairs", a participant never sees more: the cap holds the item in hand too."""
    from annotation.selectors.progress import progress_of

    participant = admitted(client, panel, luffy)
    for done in range(ITEMS):
        response = client.get(reverse("annotate"))
        client.get(response["Location"])
        progress = progress_of(participant.user)
        assert (progress.done, progress.done + progress.remaining) == (done, ITEMS)
        token = response["Location"].rstrip("/").rsplit("/", 1)[-1]
        client.post(reverse("annotate-item", args=[token]), complete_form())


def test_a_participant_who_comes_to_the_rating_page_too_early_goes_back_to_their_start(
    client, panel
):
    join(client, panel)

    # Before consent: their own start page, never the site's screening.
    assert client.get(reverse("annotate"))["Location"] == start_url(panel)
    assert client.get(reverse("panel-check", args=[panel.study.slug]))["Location"] in (
        reverse("annotate"),
        start_url(panel),
    )
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    assert client.get(reverse("annotate"))["Location"] == start_url(panel)


def test_a_participant_without_their_session_is_sent_back_to_the_panels_link(client, panel):
    for name in ("panel-start", "panel-done", "panel-check", "panel-leave"):
        response = client.get(reverse(name, args=[panel.study.slug]))
        assert response.status_code == 403, name
        assert b"from the link on the panel" in response.content, name
        assert b"password" not in response.content.lower(), name
        # Their ratings are saved: only this browser lost them.
        assert b"Nothing was recorded" not in response.content, name
        assert b"What you have already rated is kept" in response.content, name


def test_a_participant_is_offered_neither_writing_nor_logging_out(client, panel, luffy):
    admitted(client, panel, luffy)

    page = client.get(start_url(panel)).content.decode()

    assert 'data-testid="write-nav"' not in page and "Sign out" not in page
    assert 'data-testid="panel-begin"' in page and "minutes left" in page


def test_choosing_three_characters_costs_as_many_statements_as_choosing_one(client, study):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from dialogues.models import Character

    characters = list(Character.objects.order_by("pk"))
    assert len(characters) == 3
    panel = make_panel_study(study, items_per_participant=ITEMS)

    def statements_to_choose(chosen, pid) -> int:
        client.cookies.clear()
        join(client, panel, pid)
        client.post(start_url(panel), {"step": "consent", "agree": "yes"})
        form = {"step": "characters", "characters": [c.pk for c in chosen]}
        with CaptureQueriesContext(connection) as queries:
            assert client.post(start_url(panel), form).status_code == 302
        return len(queries.captured_queries)

    one = statements_to_choose(characters[:1], "5f0000000000000000000001")
    three = statements_to_choose(characters, "5f0000000000000000000003")

    assert three == one, (one, three)


def test_a_participant_may_skip_as_many_items_as_the_panel_allows_and_no_more(client, panel, luffy):
    """Each skip closes the items that show its answers, and a participant with no item
    left is paid a screen-out: unlimited skips would be a way to that pay."""
    participant = admitted(client, panel, luffy)
    membership = StudyMembership.objects.get(annotator=participant.user)
    assert membership.skips_allowed == panel.skips_per_participant == 3
    assert "at most 3 items in all" in client.get(start_url(panel)).content.decode()
    for _ in range(3):
        item_url = client.get(reverse("annotate"))["Location"]
        assert client.post(item_url + "skip/", {"reason": "unclear"}).status_code == 302

    item_url = client.get(reverse("annotate"))["Location"]
    refused = client.post(item_url + "skip/", {"reason": "unclear"})

    assert refused.status_code == 422
    assert "You may skip 3 items in this study and have done so" in refused.content.decode()
    assert Assignment.objects.filter(annotator=participant.user, state="skipped").count() == 3
    assert Assignment.objects.get(annotator=participant.user, state="active")
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.STARTED, "")


def test_a_panel_that_allows_no_skip_says_so_before_the_first_item(client, study, luffy):
    panel = make_panel_study(study, items_per_participant=ITEMS, skips_per_participant=0)
    admitted(client, panel, luffy)

    page = client.get(start_url(panel)).content.decode()

    assert "this study does not let items be skipped" in page


@pytest.mark.parametrize(
    ("skips", "promise"),
    [
        (3, "skip up to 3 items"),
        (1, "skip up to 1 item,"),
        (0, "this study asks you to rate every item you are given, without skipping"),
    ],
)
def test_the_consent_promises_the_skips_the_panel_allows(client, study, skips, promise):
    panel = make_panel_study(study, items_per_participant=ITEMS, skips_per_participant=skips)
    join(client, panel)

    page = client.get(start_url(panel)).content.decode()

    assert 'name="agree"' in page and promise in page
    assert "skip any item" not in page
