"""Attention checks in a participant's batch, through the pages as a browser uses them:
the rating page sends them to one instructional question after the items the study names;
failing two (one in a study under five minutes) ends the batch with the failed-checks
code and frees their leases at once; a check staff set aside stops counting; replayed and
forged answers change nothing. Other quality signals only mark the participant for review."""

import re

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import (
    AnnotatorProfile,
    Assignment,
    AssignmentState,
    AuditAction,
    AuditEvent,
    ProfileStatus,
    QualityFlag,
    Study,
)
from panels import checks, selectors, services
from panels.destinations import work_stop
from panels.models import CheckAnswer, Participant, ParticipantState
from tests.builders import make_panel_study, make_study, panel_participant
from tests.helpers import assert_blind
from tests.panels.test_batch import admitted, done_url, join, rate_one, start_url

pytestmark = pytest.mark.django_db

FAILED_CODE = "FAILED9"
COMPLETION_LINK = "https://app.prolific.com/submissions/complete?cc="


def check_url(panel):
    return reverse("panel-check", args=[panel.study.slug])


def checked_panel(study, *, items=4, positions=(1, 3), minutes=60, **settings):
    return make_panel_study(
        study,
        items_per_participant=items,
        check_positions=list(positions),
        failed_checks_code=FAILED_CODE,
        minutes=minutes,
        **settings,
    )


def shown_check(client, panel) -> tuple[int, checks.Check]:
    """The check the page shows: its position and the question, read from the form."""
    page = client.get(check_url(panel))
    assert page.status_code == 200, page.status_code
    body = page.content.decode()
    position = int(re.search(r'name="position" value="(\d+)"', body).group(1))
    key = re.search(r'name="check" value="([^"]+)"', body).group(1)
    return position, checks.BY_KEY[key]


def card(response) -> str:
    """The page's own content (the rest carries a fresh CSRF token on each visit)."""
    return re.search(r"<section.*?</section>", response.content.decode(), re.S).group(0)


def wrong_choice(check: checks.Check) -> str:
    return next(choice.key for choice in check.choices if choice.key != check.instructed)


def answer_check(client, panel, *, passing: bool):
    """Answer the check the rating page sends the participant to; the response."""
    assert client.get(reverse("annotate"))["Location"] == check_url(panel)
    position, check = shown_check(client, panel)
    chosen = check.instructed if passing else wrong_choice(check)
    return client.post(
        check_url(panel), {"position": position, "check": check.key, "choice": chosen}
    )


# The bank and its rules --------------------------------------------------------------------


def test_every_check_of_the_bank_says_in_the_question_which_answer_to_give():
    assert len(checks.BANK) >= 4
    assert len(checks.BY_KEY) == len(checks.BANK)
    for check in checks.BANK:
        assert len(check.key) <= 40 and check.zh and check.en
        labels = {choice.key: choice for choice in check.choices}
        assert len(labels) == len(check.choices) >= 4
        instructed = labels[check.instructed]
        # An instructional check names the answer it wants, in both languages.
        assert instructed.en in check.prompt("en")
        assert instructed.zh in check.prompt("zh-hans")
        assert all(len(choice.key) <= 40 for choice in check.choices)


def test_a_participant_meets_a_different_check_at_each_position_always_the_same_one():
    positions = [2, 5, 9]
    for participant_id in range(1, 12):
        shown = [
            checks.check_shown(participant_id=participant_id, position=p, positions=positions)
            for p in positions
        ]
        assert len({check.key for check in shown}) == len(positions)
        again = checks.check_shown(participant_id=participant_id, position=5, positions=positions)
        assert again == shown[1]


def test_a_voided_check_is_never_shown_and_none_is_shown_once_all_are_voided():
    voided = [checks.BANK[0].key, checks.BANK[2].key]
    for participant_id in range(1, 20):
        for position in (1, 2, 3):
            shown = checks.check_shown(
                participant_id=participant_id, position=position, positions=[1, 2, 3], voided=voided
            )
            assert shown.key not in voided
    every = [check.key for check in checks.BANK]
    assert checks.check_shown(participant_id=1, position=1, positions=[1], voided=every) is None


def test_two_failed_checks_end_a_batch_and_one_in_a_study_under_five_minutes():
    assert checks.failure_threshold(60) == 2
    assert checks.failure_threshold(5) == 2
    assert checks.failure_threshold(4) == 1


def test_the_check_owed_is_the_first_position_reached_after_the_last_answered():
    assert checks.due_position([3, 8], rated=2, answered_up_to=0) is None
    assert checks.due_position([3, 8], rated=3, answered_up_to=0) == 3
    assert checks.due_position([3, 8], rated=5, answered_up_to=0) == 3
    assert checks.due_position([3, 8], rated=5, answered_up_to=3) is None
    assert checks.due_position([3, 8], rated=9, answered_up_to=3) == 8
    assert checks.due_position([], rated=9, answered_up_to=0) is None


# A participant's batch with checks ---------------------------------------------------------


def test_a_participant_who_passes_every_check_completes_with_the_completion_code(
    client, study, luffy
):
    panel = checked_panel(study, items=4, positions=(1, 3))
    participant = admitted(client, panel, luffy)

    rate_one(client)
    page = client.get(check_url(panel))
    assert page.status_code == 200 and b'data-testid="check-choice"' in page.content
    assert_blind(page)
    response = answer_check(client, panel, passing=True)
    assert response.status_code == 302 and response["Location"] == reverse("annotate")
    rate_one(client)
    rate_one(client)
    answer_check(client, panel, passing=True)
    rate_one(client)

    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    done = client.get(done_url(panel)).content.decode()
    assert "C1A2B3" in done and COMPLETION_LINK + "C1A2B3" in done
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert list(CheckAnswer.objects.values_list("position", "passed")) == [(1, True), (3, True)]


def test_failing_one_check_in_a_study_of_five_minutes_or_more_still_completes(client, study, luffy):
    panel = checked_panel(study, items=3, positions=(1, 2), minutes=5)
    participant = admitted(client, panel, luffy)

    rate_one(client)
    answer_check(client, panel, passing=False)
    rate_one(client)
    answer_check(client, panel, passing=True)
    rate_one(client)
    client.get(done_url(panel))

    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert not AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).exists()


def test_failing_two_checks_ends_the_batch_with_the_failed_checks_code_at_once(
    client, study, luffy
):
    panel = checked_panel(study, items=4, positions=(1, 2))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    response = answer_check(client, panel, passing=False)
    assert response["Location"] == reverse("annotate")
    rate_one(client)
    # An item leased in another tab before the second check: it must not wait for them.
    other_tab = annotation_services.assignment_next(user=participant.user)
    assert other_tab.state == AssignmentState.ACTIVE

    response = answer_check(client, panel, passing=False)

    assert response.status_code == 302 and response["Location"] == done_url(panel)
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.FAILED_CHECKS, FAILED_CODE)
    assert participant.finished_at is not None
    other_tab.refresh_from_db()
    assert other_tab.state == AssignmentState.EXPIRED
    assert not Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()
    event = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert event.actor is None and event.study == study
    assert event.before == {"state": "started"}
    assert event.after == {
        "state": "failed_checks",
        "code": FAILED_CODE,
        "checks_failed": 2,
        "leases_released": 1,
    }

    done = client.get(done_url(panel))
    body = card(done)
    assert b'data-testid="panel-failed-checks"' in done.content
    assert FAILED_CODE in body and COMPLETION_LINK + FAILED_CODE in body
    assert "C1A2B3" not in body
    assert_blind(done)
    # No completion code, ever, by any road; the same page on every visit.
    with pytest.raises(services.PanelError):
        services.participant_complete(participant=participant)
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    assert client.get(check_url(panel))["Location"] == done_url(panel)
    assert join(client, panel).status_code == 302
    assert client.get(start_url(panel))["Location"] == done_url(panel)
    assert card(client.get(done_url(panel))) == body
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.FAILED_CHECKS, FAILED_CODE)
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1


def test_in_a_study_under_five_minutes_one_failed_check_ends_the_batch(client, study, luffy):
    panel = checked_panel(study, items=3, positions=(1,), minutes=4)
    participant = admitted(client, panel, luffy)
    rate_one(client)

    answer_check(client, panel, passing=False)

    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.FAILED_CHECKS, FAILED_CODE)


def test_the_completion_code_waits_for_a_check_owed_after_the_last_item(client, study, luffy):
    panel = checked_panel(study, items=2, positions=(2,))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    rate_one(client)

    with pytest.raises(services.PanelError) as refused:
        services.participant_complete(participant=participant)
    assert refused.value.code == "check_owed"
    assert client.get(done_url(panel))["Location"] == check_url(panel)
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.STARTED, "")

    answer_check(client, panel, passing=True)
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    assert "C1A2B3" in client.get(done_url(panel)).content.decode()


def test_the_check_page_reads_in_chinese(client, study, luffy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    panel = checked_panel(study, items=2, positions=(1,))
    participant = admitted(client, panel, luffy)
    rate_one(client)

    body = client.get(check_url(panel)).content.decode()

    check = selectors.check_owed(participant)[1]
    assert check.zh in body and check.en not in body
    assert "一个小问题" in body


# Checks set aside as unclear ---------------------------------------------------------------


def test_a_voided_checks_failure_does_not_count_and_it_is_not_shown_again(
    client, study, luffy, manager
):
    panel = checked_panel(study, items=3, positions=(1, 2))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    _position, unclear = shown_check(client, panel)
    answer_check(client, panel, passing=False)

    services.check_void(
        panel_study=panel, check_key=unclear.key, actor=manager, reason="ambiguous wording"
    )

    rate_one(client)
    _position, second = shown_check(client, panel)
    assert second.key != unclear.key
    answer_check(client, panel, passing=False)
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED
    rate_one(client)
    client.get(done_url(panel))
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")

    results = selectors.check_results(panel)
    assert list(results) == [check.key for check in checks.BANK]
    assert (results[unclear.key].shown, results[unclear.key].failed) == (1, 1)
    assert results[unclear.key].voided and not results[second.key].voided
    assert (results[second.key].shown, results[second.key].failed) == (1, 1)
    event = AuditEvent.objects.get(action=AuditAction.PANEL_CHECK_VOID)
    assert event.actor == manager and event.note == "ambiguous wording"
    assert event.before == {"voided_checks": []}
    assert event.after == {"voided_checks": [unclear.key]}


def test_voiding_a_check_twice_changes_nothing_the_second_time(study, manager):
    panel = checked_panel(study)
    key = checks.BANK[1].key
    services.check_void(panel_study=panel, check_key=key, actor=manager, reason="unclear")
    services.check_void(panel_study=panel, check_key=key, actor=manager, reason="unclear")

    panel.refresh_from_db()
    assert panel.voided_checks == [key]
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_CHECK_VOID).count() == 1


@pytest.mark.parametrize(
    ("key", "reason", "code"),
    [("no-such-check", "unclear", "check_key"), (checks.BANK[0].key, "   ", "reason")],
)
def test_a_void_without_a_known_check_or_a_reason_is_refused(study, manager, key, reason, code):
    panel = checked_panel(study)
    audited = AuditEvent.objects.count()

    with pytest.raises(services.PanelError) as refused:
        services.check_void(panel_study=panel, check_key=key, actor=manager, reason=reason)

    assert refused.value.code == code
    panel.refresh_from_db()
    assert panel.voided_checks == []
    assert AuditEvent.objects.count() == audited


# Replayed and forged answers ---------------------------------------------------------------


def test_a_replayed_answer_changes_nothing(client, study, luffy):
    panel = checked_panel(study, items=3, positions=(1, 2))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    position, check = shown_check(client, panel)
    first = {"position": position, "check": check.key, "choice": check.instructed}
    client.post(check_url(panel), first)

    replay = client.post(check_url(panel), {**first, "choice": wrong_choice(check)})

    assert replay.status_code == 302
    assert list(CheckAnswer.objects.values_list("position", "chosen", "passed")) == [
        (1, check.instructed, True)
    ]
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED
    # Replayed through the service too: the same participant back, nothing written.
    again = services.check_answer(
        participant=participant, position=1, check_key=check.key, chosen=wrong_choice(check)
    )
    assert again.state == ParticipantState.STARTED
    assert CheckAnswer.objects.count() == 1


def forged_posts(position: int, check: checks.Check) -> list[dict]:
    other = next(key for key in checks.BY_KEY if key != check.key)
    return [
        {"position": position + 1, "check": check.key, "choice": check.instructed},
        {"position": position, "check": other, "choice": check.instructed},
        {"position": position, "check": check.key, "choice": "no-such-answer"},
        {"position": "one", "check": check.key, "choice": check.instructed},
        {"position": position, "check": check.key},
        {"position": 0, "check": check.key, "choice": check.instructed},
    ]


def test_forged_answers_are_refused_and_change_nothing(client, study, luffy):
    panel = checked_panel(study, items=3, positions=(1, 2))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    position, check = shown_check(client, panel)

    for forged in forged_posts(position, check):
        response = client.post(check_url(panel), forged)
        assert response.status_code == 422, forged
        assert b'data-testid="error"' in response.content
        assert b'data-testid="check-choice"' in response.content

    assert not CheckAnswer.objects.exists()
    participant.refresh_from_db()
    assert participant.state == ParticipantState.STARTED
    assert shown_check(client, panel) == (position, check)


def test_an_answer_to_a_check_not_yet_due_is_refused(client, study, luffy):
    panel = checked_panel(study, items=3, positions=(2,))
    participant = admitted(client, panel, luffy)
    rate_one(client)
    check = checks.check_shown(participant_id=participant.pk, position=2, positions=[2])

    assert client.get(check_url(panel))["Location"] == reverse("annotate")
    response = client.post(
        check_url(panel), {"position": 2, "check": check.key, "choice": check.instructed}
    )

    assert response.status_code == 302 and response["Location"] == reverse("annotate")
    with pytest.raises(services.PanelError) as refused:
        services.check_answer(
            participant=participant, position=2, check_key=check.key, chosen=check.instructed
        )
    assert refused.value.code == "not_due"
    assert not CheckAnswer.objects.exists()


def test_another_participants_check_page_is_not_found(client, study, luffy, alice, demo_dataset):
    panel = checked_panel(study, items=3, positions=(1,))
    other = checked_panel(make_study(), items=3, positions=(1,))
    someone = panel_participant(other, pid="someone-else")
    admitted(client, panel, luffy)
    rate_one(client)
    check = checks.check_shown(participant_id=someone.pk, position=1, positions=[1])
    post = {"position": 1, "check": check.key, "choice": check.instructed}

    assert client.get(check_url(other)).status_code == 404
    assert client.post(check_url(other), post).status_code == 404
    client.force_login(alice)
    assert client.get(check_url(panel)).status_code == 404
    assert client.post(check_url(panel), post).status_code == 404
    assert not CheckAnswer.objects.exists()


# The rating page's one read ----------------------------------------------------------------


def test_the_rating_page_asks_one_read_for_a_participant_with_checks(
    client, study, luffy, alice, django_assert_num_queries
):
    panel = checked_panel(study, items=3, positions=(1,))
    user = admitted(client, panel, luffy).user
    with django_assert_num_queries(1):
        assert work_stop(user) is None
    rate_one(client)
    with django_assert_num_queries(1):
        assert work_stop(user) == check_url(panel)
    with django_assert_num_queries(0):
        assert work_stop(alice) is None


# Quality signals mark for review, and decide nothing ---------------------------------------


def test_flags_mark_the_participant_for_review_and_never_change_the_code(client, study, luffy):
    """The test client's submissions are instant and rate every scale 4: each one is
    flagged too fast and straight-lined."""
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    panel = make_panel_study(study, items_per_participant=3)
    participant = admitted(client, panel, luffy)
    for _ in range(3):
        rate_one(client)

    client.get(done_url(panel))

    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert participant.review_reasons["too_fast"] == 3
    assert participant.review_reasons["straight_lining"] == 3
    assert set(participant.review_reasons) <= set(selectors.REVIEW_KINDS)


def test_a_low_agreement_flag_found_later_marks_the_participant_on_refresh(client, study, luffy):
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    panel = make_panel_study(study, items_per_participant=1)
    participant = admitted(client, panel, luffy)
    rate_one(client)
    client.get(done_url(panel))
    QualityFlag.objects.create(
        annotator=participant.user, study=study, kind="low_agreement", figures={"distance": 2.1}
    )
    elsewhere = make_study()
    QualityFlag.objects.create(annotator=participant.user, study=elsewhere, kind="too_fast")

    services.participant_review_refresh(participant=participant)

    participant.refresh_from_db()
    assert participant.review_reasons == {"too_fast": 1, "straight_lining": 1, "low_agreement": 1}
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")


def test_an_automatic_pause_never_strands_a_participant_mid_batch(client, study, luffy):
    """The study pauses an annotator after one open flag, and every judgment of the test
    client is flagged: a participant still rates their whole batch and gets their code."""
    Study.objects.filter(pk=study.pk).update(pause_after_flags=1)
    panel = make_panel_study(study, items_per_participant=3)
    participant = admitted(client, panel, luffy)

    for _ in range(3):
        rate_one(client)
    client.get(done_url(panel))

    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")
    assert AnnotatorProfile.objects.get(user=participant.user).status == ProfileStatus.APPROVED
    assert QualityFlag.objects.filter(annotator=participant.user, resolved_at=None).count() >= 3
    assert participant.review_reasons


def test_an_annotator_recruited_on_the_site_is_still_paused(study, alice):
    from annotation.services.quality import pause_if_flagged

    Study.objects.filter(pk=study.pk).update(pause_after_flags=1)
    study.refresh_from_db()
    QualityFlag.objects.create(annotator=alice, study=study, kind="too_fast")

    assert pause_if_flagged(annotator=alice, study=study)
    assert AnnotatorProfile.objects.get(user=alice).status == ProfileStatus.SUSPENDED


def test_a_participant_who_failed_the_checks_is_marked_for_review_too(client, study, luffy):
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    panel = checked_panel(study, items=3, positions=(1,), minutes=4)
    participant = admitted(client, panel, luffy)
    rate_one(client)

    answer_check(client, panel, passing=False)

    participant.refresh_from_db()
    assert participant.state == ParticipantState.FAILED_CHECKS
    assert participant.review_reasons == {"too_fast": 1, "straight_lining": 1}
    assert Participant.objects.get(pk=participant.pk).code == FAILED_CODE
