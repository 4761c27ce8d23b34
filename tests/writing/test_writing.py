"""Fan writing: applications, leases on cells, the two rounds, the user's follow-up by a
second person, staff review, quality flags, the study policy and bad input."""

import json

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import AuditEvent, Qualification, QualificationStatus
from dialogues.models import Answer, Scenario, Source, SourceKind
from tests.builders import (
    FOLLOWUP,
    ROUND_1,
    ROUND_2,
    UserFactory,
    approved_annotator,
    make_run,
    make_writer,
)
from writing import services
from writing.models import (
    ApplicationStatus,
    FollowupMode,
    TaskState,
    WriterApplication,
    WritingRun,
    WritingTask,
)


@pytest.fixture
def scenarios(demo_dataset):
    return list(Scenario.objects.order_by("number")[:2])


@pytest.fixture
def wendy(luffy):
    return make_writer("wendy@example.com", [luffy])


@pytest.fixture
def umar(luffy):
    """Another writer of Luffy, who can play the user for Wendy."""
    return make_writer("umar@example.com", [luffy])


@pytest.fixture
def run(luffy, scenarios):
    return make_run([luffy], scenarios)


@pytest.fixture
def staff(db):
    return UserFactory(email="manager@example.com", is_staff=True)


def write_dialogue(writer, player, *, r1=ROUND_1, r2=ROUND_2):
    task = services.task_next(user=writer)
    services.round_1_submit(user=writer, token=task.token, text=r1)
    followup = services.followup_next(user=player)
    assert followup.pk == task.pk
    services.followup_submit(user=player, followup_token=followup.followup_token, text=FOLLOWUP)
    return services.round_2_submit(user=writer, token=task.token, text=r2)


def test_a_writer_must_pass_screening_before_applying(luffy):
    stranger = UserFactory(email="stranger@example.com")
    with pytest.raises(services.WritingError) as refusal:
        services.writer_apply(user=stranger, character=luffy, sample="你好")
    assert refusal.value.code == "not_screened"
    assert not WriterApplication.objects.exists()


def test_a_sample_too_short_to_judge_is_refused_and_nothing_is_saved(luffy):
    user = UserFactory(email="brief@example.com")
    profile = annotation_services.consent_give(user=user)
    Qualification.objects.create(
        profile=profile, character=luffy, status=QualificationStatus.PASSED
    )
    with pytest.raises(services.WritingError) as refusal:
        services.writer_apply(user=user, character=luffy, sample="hi")
    assert refusal.value.code == "too_short"
    assert "at least 20 characters" in refusal.value.message
    assert not WriterApplication.objects.exists()


def test_an_unapproved_writer_gets_no_task(run, luffy):
    pending = make_writer("pending@example.com", [luffy], approve=False)
    assert services.task_next(user=pending) is None


def test_staff_approval_is_audited(luffy):
    writer = make_writer("wendy@example.com", [luffy])
    application = WriterApplication.objects.get(user=writer)
    assert application.status == ApplicationStatus.APPROVED
    assert AuditEvent.objects.filter(
        action="writer.approve", target_id=str(application.pk)
    ).exists()


def test_the_whole_dialogue_is_written_with_a_second_person_playing_the_user(run, wendy, umar):
    task = write_dialogue(wendy, umar)
    assert task.state == TaskState.SUBMITTED
    assert (task.answer_r1, task.question_r2, task.answer_r2) == (ROUND_1, FOLLOWUP, ROUND_2)
    assert task.followup_writer == umar
    assert task.seconds_r1 is not None and task.seconds_r1 >= 0
    assert task.seconds_r2 is not None and task.seconds_r2 >= 0


def test_nobody_plays_the_user_for_their_own_answer(run, wendy):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    assert services.followup_next(user=wendy) is None


def test_a_writer_holds_one_cell_at_a_time_and_two_writers_get_different_cells(run, wendy, umar):
    first = services.task_next(user=wendy)
    assert services.task_next(user=wendy).pk == first.pk
    second = services.task_next(user=umar)
    assert second.pk != first.pk
    third = make_writer("third@example.com", [run.characters.get()])
    assert services.task_next(user=third) is None  # both cells of the run are taken


def test_an_expired_round_1_lease_goes_back_to_the_pool(run, wendy, umar):
    task = services.task_next(user=wendy)
    services.task_next(user=umar)
    WritingTask.objects.filter(pk=task.pk).update(lease_expires_at="2000-01-01T00:00:00Z")
    third = make_writer("third@example.com", [run.characters.get()])
    assert services.task_next(user=third).pk == task.pk
    with pytest.raises(services.WritingError) as refusal:
        services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    assert refusal.value.code == "not_yours"


def test_accepted_dialogues_become_answers_of_the_human_source(run, wendy, umar, staff):
    task = write_dialogue(wendy, umar)
    services.task_accept(task=task, reviewer=staff)
    answers = Answer.objects.filter(source=run.source).order_by("round")
    assert run.source.kind == SourceKind.HUMAN
    assert [(a.round, a.question, a.text, a.author) for a in answers] == [
        (1, task.scenario.question, ROUND_1, wendy),
        (2, FOLLOWUP, ROUND_2, wendy),
    ]
    assert AuditEvent.objects.filter(action="writing.accept", target_id=str(task.pk)).exists()


def test_a_returned_dialogue_goes_back_with_the_note_and_is_handed_in_again(
    run, wendy, umar, staff
):
    task = write_dialogue(wendy, umar)
    services.task_return(task=task, reviewer=staff, note="更像路飞一点，多用感叹号")
    assert services.task_next(user=wendy).pk == task.pk
    services.round_2_submit(user=wendy, token=task.token, text=ROUND_2 + "！")
    task.refresh_from_db()
    assert task.state == TaskState.SUBMITTED
    assert not Answer.objects.filter(source=run.source).exists()


def test_returning_needs_a_note(run, wendy, umar, staff):
    task = write_dialogue(wendy, umar)
    with pytest.raises(services.WritingError):
        services.task_return(task=task, reviewer=staff, note="  ")
    task.refresh_from_db()
    assert task.state == TaskState.SUBMITTED


def test_staff_edits_are_audited_with_both_versions(run, wendy, umar, staff):
    task = write_dialogue(wendy, umar)
    services.task_accept(task=task, reviewer=staff)
    services.task_edit(
        task=task, reviewer=staff, answer_r1=ROUND_1, question_r2=FOLLOWUP, answer_r2="改过的第二轮"
    )
    event = AuditEvent.objects.get(action="writing.edit")
    assert event.before == {"answer_r2": ROUND_2}
    assert event.after == {"answer_r2": "改过的第二轮"}
    assert Answer.objects.get(source=run.source, round=2).text == "改过的第二轮"


def test_pastes_and_near_duplicates_of_other_sources_are_flagged(run, wendy, umar):
    task = services.task_next(user=wendy)
    published = Answer.objects.filter(
        character=task.character, scenario=task.scenario, round=1
    ).exclude(source=run.source)[0]
    services.round_1_submit(user=wendy, token=task.token, text=published.text + "！", pastes=2)
    task.refresh_from_db()
    assert "paste:r1" in task.flags
    assert f"near_duplicate:{published.source.slug}:r1" in task.flags
    assert task.paste_events == 2


def test_an_answer_typed_from_scratch_is_not_flagged(run, wendy, umar):
    task = write_dialogue(wendy, umar)
    assert task.flags == []


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("短", "too_short"),
        ("好" * 401, "too_long"),
        ("别怕\x00别怕别怕别怕别怕", "nul"),
    ],
)
def test_bad_answers_are_refused_and_nothing_is_saved(run, wendy, text, code):
    task = services.task_next(user=wendy)
    with pytest.raises(services.WritingError) as refusal:
        services.round_1_submit(user=wendy, token=task.token, text=text)
    assert refusal.value.code == code
    task.refresh_from_db()
    assert task.state == TaskState.ROUND_1 and task.answer_r1 == ""


def test_a_run_needs_a_new_source_and_valid_limits(luffy, scenarios):
    with pytest.raises(services.WritingError):
        make_run([luffy], scenarios, source_slug="human")  # the imported human source
    with pytest.raises(services.WritingError):
        make_run([luffy], scenarios, min_chars=50, max_chars=10)
    with pytest.raises(services.WritingError):
        make_run([luffy], scenarios, followup_mode=FollowupMode.SIMULATOR)
    assert not WritingRun.objects.exists()


def test_writers_per_character_caps_how_many_share_a_character(luffy, scenarios, wendy, umar):
    make_run([luffy], scenarios, writers_per_character=1)
    assert services.task_next(user=wendy) is not None
    assert services.task_next(user=umar) is None


def test_a_writer_never_rates_a_study_containing_their_answers(
    run, wendy, umar, staff, luffy, demo_dataset
):
    for _ in range(2):
        services.task_accept(task=write_dialogue(wendy, umar), reviewer=staff)
    # Wendy writes Luffy and is also an approved annotator of Luffy.
    approved_annotator("wendy@example.com", [luffy])
    approved_annotator("rater@example.com", [luffy])
    study = annotation_services.study_create(
        name="Fans vs models",
        reference=run.source,
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=[luffy],
        rounds=(1, 2),
        overlap=2,
    )
    annotation_services.study_open(study=study)
    assert annotation_services.assignment_next(user=wendy) is None
    rater = UserFactory(email="rater@example.com")
    assert annotation_services.assignment_next(user=rater).item.study == study


def test_a_writer_still_rates_studies_without_their_answers(run, wendy, umar, staff, luffy):
    services.task_accept(task=write_dialogue(wendy, umar), reviewer=staff)
    approved_annotator("wendy@example.com", [luffy])
    study = annotation_services.study_create(
        name="Published fans vs models",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=[luffy],
    )
    annotation_services.study_open(study=study)
    assert annotation_services.assignment_next(user=wendy) is not None


def test_export_answers_writes_accepted_dialogues_in_the_chatanime_format(
    run, wendy, umar, staff, tmp_path
):
    from django.core.management import call_command

    task = write_dialogue(wendy, umar)
    services.task_accept(task=task, reviewer=staff)
    call_command("export_answers", "--source", run.source.slug, "-o", str(tmp_path))
    content = json.loads((tmp_path / f"{run.source.slug}.json").read_text(encoding="utf-8"))
    assert content == {
        "_source": {"kind": "human", "display_name": run.source.display_name},
        task.character.key: [
            {
                "dialog_id": task.scenario.number,
                "question_r1": task.scenario.question,
                "answer_r1": ROUND_1,
                "question_r2": FOLLOWUP,
                "answer_r2": ROUND_2,
                "author": wendy.annotator_profile.pseudonym,
            }
        ],
    }
    assert "wendy" not in json.dumps(content)


def test_a_fans_source_exported_and_imported_elsewhere_stays_human_with_its_authors(
    run, wendy, umar, staff, tmp_path
):
    """Another installation knows neither the run nor the writers: it has only the file."""
    from django.core.management import call_command

    from dialogues.importer import import_chatanime

    task = write_dialogue(wendy, umar)
    services.task_accept(task=task, reviewer=staff)
    slug, display_name = run.source.slug, run.source.display_name
    call_command("export_answers", "--source", slug, "-o", str(tmp_path))
    WritingTask.objects.all().delete()
    WritingRun.objects.all().delete()
    Answer.objects.filter(source__slug=slug).delete()
    Source.objects.filter(slug=slug).delete()

    report = import_chatanime(tmp_path)

    source = Source.objects.get(slug=slug)
    assert (source.kind, source.display_name) == (SourceKind.HUMAN, display_name)
    assert report.sources_created == 1 and report.answers_created == 2
    assert set(Answer.objects.filter(source=source).values_list("author_label", flat=True)) == {
        wendy.annotator_profile.pseudonym
    }
    assert import_chatanime(tmp_path).changed_anything is False


# --- pages ---------------------------------------------------------------------------


HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>路飞说：别哭！'


def test_the_writing_page_shows_the_scenario_and_escapes_hostile_text(client, run, wendy, umar):
    client.force_login(wendy)
    response = client.get(reverse("write-next"), follow=True)
    assert response.status_code == 200
    task = WritingTask.objects.get(writer=wendy)
    assert task.scenario.question in response.content.decode()
    response = client.post(reverse("write-task", args=[task.token]), {"answer": HOSTILE})
    assert response.status_code == 302
    client.force_login(umar)
    page = client.get(reverse("write-user")).content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    followup = WritingTask.objects.get(pk=task.pk)
    client.post(reverse("write-user-submit", args=[followup.followup_token]), {"question": HOSTILE})
    client.force_login(wendy)
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;") == 2  # the writer's round 1 and the user's reply


def test_the_user_page_says_how_long_a_reply_may_be_and_refuses_a_word(client, run, wendy, umar):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    client.force_login(umar)
    page = client.get(reverse("write-user")).content.decode()
    assert f"between {run.min_chars} and {run.max_chars} characters" in page
    followup = WritingTask.objects.get(pk=task.pk)
    response = client.post(
        reverse("write-user-submit", args=[followup.followup_token]), {"question": "嗯嗯"}
    )
    assert f"at least {run.min_chars} characters; it has 2" in response.content.decode()
    assert "嗯嗯" in response.content.decode()  # the text comes back to be lengthened
    task.refresh_from_db()
    assert task.state == TaskState.AWAITING_FOLLOWUP and task.question_r2 == ""


def test_a_dialogue_handed_in_leads_back_to_the_writing_page_holding_nothing(
    client, run, wendy, umar
):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    followup = services.followup_next(user=umar)
    services.followup_submit(user=umar, followup_token=followup.followup_token, text=FOLLOWUP)
    client.force_login(wendy)
    response = client.post(reverse("write-task", args=[task.token]), {"answer": ROUND_2})
    assert response.status_code == 302 and response.url == reverse("write")
    # The run's other cell stays free for whoever writes next, Wendy included.
    assert WritingTask.objects.filter(writer=wendy).count() == 1
    page = client.get(response.url).content.decode()
    assert "Handed in. Thank you!" in page and 'data-testid="write-next"' in page


def test_a_refused_answer_comes_back_with_a_clear_error_and_the_text(client, run, wendy):
    client.force_login(wendy)
    client.get(reverse("write-next"))
    task = WritingTask.objects.get(writer=wendy)
    response = client.post(reverse("write-task", args=[task.token]), {"answer": "好" * 500})
    assert response.status_code == 422
    assert "at most 400 characters" in response.content.decode()
    task.refresh_from_db()
    assert task.answer_r1 == "" and task.state == TaskState.ROUND_1


def test_another_writers_task_looks_like_one_that_does_not_exist(client, run, wendy, umar):
    task = services.task_next(user=wendy)
    client.force_login(umar)
    assert client.get(reverse("write-task", args=[task.token])).status_code == 404
    response = client.post(reverse("write-task", args=[task.token]), {"answer": ROUND_1})
    assert response.status_code == 404
    task.refresh_from_db()
    assert task.answer_r1 == ""


@pytest.mark.parametrize("who", ["anonymous", "annotator"])
def test_only_staff_see_runs_and_review(client, run, wendy, umar, who, luffy):
    task = write_dialogue(wendy, umar)
    if who == "annotator":
        client.force_login(approved_annotator("ann@example.com", [luffy]))
    for url in (
        reverse("write-staff"),
        reverse("write-staff-run", args=[run.pk]),
        reverse("write-staff-task", args=[task.pk]),
    ):
        assert client.get(url).status_code in (302, 403)
    response = client.post(reverse("write-staff-task", args=[task.pk]), {"action": "accept"})
    assert response.status_code in (302, 403)
    task.refresh_from_db()
    assert task.state == TaskState.SUBMITTED


def test_staff_see_progress_and_pending_applications_on_the_screening_page(
    client, run, wendy, umar, staff, luffy
):
    write_dialogue(wendy, umar)
    make_writer("newcomer@example.com", [luffy], approve=False)
    client.force_login(staff)
    page = client.get(reverse("write-staff")).content.decode()
    assert "0 / 2 (0%)" in page
    screening = client.get(reverse("staff-screening")).content.decode()
    assert "newcomer@example.com" in screening
    # Approving and rejecting look different: only approving is the primary act.
    assert 'value="approve" class="primary"' in screening
    assert 'value="reject" class="secondary"' in screening


def test_staff_accept_through_the_review_page(client, run, wendy, umar, staff):
    task = write_dialogue(wendy, umar)
    client.force_login(staff)
    response = client.post(reverse("write-staff-task", args=[task.pk]), {"action": "accept"})
    assert response.status_code == 302
    assert Answer.objects.filter(source=run.source).count() == 2


# --- the simulated follow-up, deadlines, breaks, languages ----------------------------


@pytest.fixture
def simulated_run(luffy, scenarios, chat_server):
    from collection.models import ModelEndpoint

    simulator = ModelEndpoint.objects.create(
        name="simulator", base_url=chat_server.url, model="user-sim"
    )
    return make_run(
        [luffy],
        scenarios,
        name="Simulated",
        source_slug="fans-simulated",
        followup_mode=FollowupMode.SIMULATOR,
        simulator=simulator,
    )


def test_a_failed_simulation_is_shown_and_can_be_retried(
    simulated_run, wendy, chat_server, client, django_capture_on_commit_callbacks
):
    task = services.task_next(user=wendy)
    chat_server.script("unauthorized")
    with django_capture_on_commit_callbacks(execute=True):
        services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    task.refresh_from_db()
    assert task.state == TaskState.AWAITING_FOLLOWUP and "401" in task.followup_error
    client.force_login(wendy)
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert "could not be generated" in page and "every 2s" not in page
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("write-followup-retry", args=[task.token]))
    task.refresh_from_db()
    assert task.state == TaskState.ROUND_2 and task.question_r2 and task.followup_error == ""


def test_a_simulator_without_its_key_is_a_failure_the_writer_sees(
    simulated_run, wendy, client, monkeypatch, django_capture_on_commit_callbacks
):
    """A key variable unset where the workers run is no reason to wait for ever: the page
    says the follow-up failed, and a retry after the key is set goes through."""
    simulator = simulated_run.simulator
    simulator.api_key_env = "WRITING_SIMULATOR_KEY"
    simulator.save()
    monkeypatch.delenv("WRITING_SIMULATOR_KEY", raising=False)
    task = services.task_next(user=wendy)
    with django_capture_on_commit_callbacks(execute=True):
        services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    task.refresh_from_db()
    assert task.state == TaskState.AWAITING_FOLLOWUP
    assert "WRITING_SIMULATOR_KEY" in task.followup_error
    client.force_login(wendy)
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert "could not be generated" in page and "every 2s" not in page

    monkeypatch.setenv("WRITING_SIMULATOR_KEY", "sk-now-set")
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("write-followup-retry", args=[task.token]))
    task.refresh_from_db()
    assert task.state == TaskState.ROUND_2 and task.question_r2


def test_while_the_simulator_works_the_page_polls(simulated_run, wendy, client):
    task = services.task_next(user=wendy)
    # Handed in without running the enqueued simulation: the page is waiting.
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    client.force_login(wendy)
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert 'hx-trigger="every 2s"' in page and "typing a reply" in page
    fragment = client.get(reverse("write-task", args=[task.token]), headers={"HX-Request": "true"})
    assert "HX-Refresh" not in fragment and "<html" not in fragment.content.decode()


def test_a_run_past_its_deadline_gives_no_work(run, wendy):
    WritingRun.objects.filter(pk=run.pk).update(deadline="2000-01-01T00:00:00Z")
    assert services.task_next(user=wendy) is None


def test_a_break_is_suggested_after_a_stretch_of_dialogues(run, wendy, umar, luffy, client):
    from writing.selectors import BREAK_EVERY_DIALOGUES

    more = make_run(
        [luffy],
        list(Scenario.objects.order_by("number")[2:BREAK_EVERY_DIALOGUES]),
        name="More",
        source_slug="fans-more",
    )
    assert more.tasks.count() + run.tasks.count() == BREAK_EVERY_DIALOGUES
    client.force_login(wendy)
    for _ in range(BREAK_EVERY_DIALOGUES):
        assert 'data-testid="break"' not in client.get(reverse("write")).content.decode()
        write_dialogue(wendy, umar)
    assert 'data-testid="break"' in client.get(reverse("write")).content.decode()


def test_the_writing_pages_speak_chinese_by_default(client, run, wendy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    client.force_login(wendy)
    response = client.get(reverse("write-next"), follow=True, headers={"Accept-Language": ""})
    page = response.content.decode()
    assert "角色与写作指南" in page and "发送给用户" in page


def test_only_writers_of_the_character_play_its_user(run, wendy, natsume):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    outsider = make_writer("natsume-writer@example.com", [natsume])
    assert services.followup_next(user=outsider) is None


def test_bad_follow_ups_are_refused_and_nothing_is_saved(run, wendy, umar):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    followup = services.followup_next(user=umar)
    # "嗯嗯": a reply shorter than the run lets an answer be is not a user's turn either.
    for text, code in (
        ("", "empty"),
        ("问\x00题", "nul"),
        ("问" * 401, "too_long"),
        ("嗯嗯", "too_short"),
    ):
        with pytest.raises(services.WritingError) as refusal:
            services.followup_submit(user=umar, followup_token=followup.followup_token, text=text)
        assert refusal.value.code == code
    task.refresh_from_db()
    assert task.state == TaskState.AWAITING_FOLLOWUP and task.question_r2 == ""


def test_staff_pages_escape_what_writers_typed(client, run, wendy, umar, staff):
    task = write_dialogue(wendy, umar, r1=HOSTILE, r2=HOSTILE)
    client.force_login(staff)
    page = client.get(reverse("write-staff-task", args=[task.pk])).content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_saving_a_run_in_the_admin_creates_its_tasks(client, luffy, scenarios, staff):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    response = client.post(
        reverse("admin:writing_writingrun_add"),
        {
            "name": "Admin run",
            "source": Source.objects.create(
                slug="fans-admin", kind=SourceKind.HUMAN, display_name="Fans"
            ).pk,
            "characters": [luffy.pk],
            "scenarios": [s.pk for s in scenarios],
            "followup_mode": FollowupMode.PERSON,
            "writers_per_character": 0,
            "lease_minutes": 60,
            "min_chars": 10,
            "max_chars": 400,
            "status": "open",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert WritingRun.objects.get(name="Admin run").tasks.count() == len(scenarios)


def run_form(luffy, **overrides):
    form = {
        "name": "Spring fans",
        "source_slug": "fans-spring",
        "character": [luffy.pk],
        "scenarios": "1-2",
        "followup_mode": FollowupMode.PERSON,
        "simulator": "",
        "writers_per_character": "2",
        "deadline": "2099-06-30T18:00",
        "lease_minutes": "30",
        "min_chars": "10",
        "max_chars": "300",
    }
    form.update(overrides)
    return form


def test_staff_create_a_run_on_the_staff_page(client, staff, luffy):
    client.force_login(staff)
    response = client.post(reverse("write-staff-run-create"), run_form(luffy))
    run = WritingRun.objects.get(name="Spring fans")
    assert response.status_code == 302
    assert run.tasks.count() == 2 and run.source.kind == SourceKind.HUMAN
    assert (run.writers_per_character, run.lease_minutes, run.max_chars) == (2, 30, 300)
    assert run.deadline.year == 2099


@pytest.mark.parametrize(
    "overrides",
    [
        {"name": ""},
        {"name": "春\x00天"},
        {"source_slug": "human"},
        {"source_slug": "<b>x</b>"},
        {"character": []},
        {"scenarios": "0-99"},
        {"scenarios": "1-5"},  # 3-5 are not in the database: named, not silently left out
        {"followup_mode": "telepathy"},
        {"followup_mode": FollowupMode.SIMULATOR},
        {"min_chars": "50", "max_chars": "5"},
        {"lease_minutes": "²"},
        {"deadline": "next tuesday"},
    ],
)
def test_a_bad_run_form_is_refused_and_creates_nothing(client, staff, luffy, overrides):
    client.force_login(staff)
    sources = Source.objects.count()
    response = client.post(reverse("write-staff-run-create"), run_form(luffy, **overrides))
    assert response.status_code == 422
    assert 'data-testid="error"' in response.content.decode()
    assert not WritingRun.objects.exists() and Source.objects.count() == sources


def test_while_a_person_writes_the_follow_up_the_writer_starts_another_dialogue(run, wendy, umar):
    first = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=first.token, text=ROUND_1)
    second = services.task_next(user=wendy)
    assert second.pk != first.pk and second.state == TaskState.ROUND_1
    followup = services.followup_next(user=umar)
    services.followup_submit(user=umar, followup_token=followup.followup_token, text=FOLLOWUP)
    # The follow-up has arrived: the first dialogue is the one to finish first.
    assert services.task_next(user=wendy).pk == first.pk


def test_a_writer_waits_for_the_simulated_follow_up(simulated_run, wendy):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    assert services.task_next(user=wendy).pk == task.pk


def test_reviewing_an_application_never_redirects_off_site(client, staff, luffy):
    make_writer("newcomer@example.com", [luffy], approve=False)
    application = WriterApplication.objects.get(user__email="newcomer@example.com")
    client.force_login(staff)
    response = client.post(
        reverse("write-staff-application", args=[application.pk]),
        {"decision": "approve", "next": "https://evil.example.com/"},
    )
    assert response["Location"] == reverse("write-staff")
    application.refresh_from_db()
    assert application.status == ApplicationStatus.APPROVED


def test_a_returned_dialogue_is_corrected_in_both_rounds_on_the_page(
    client, run, wendy, umar, staff
):
    task = write_dialogue(wendy, umar)
    services.task_return(task=task, reviewer=staff, note="第一轮再热情一点")
    client.force_login(wendy)
    page = client.get(reverse("write-task", args=[task.token])).content.decode()
    assert "第一轮再热情一点" in page and 'name="answer_r1"' in page
    response = client.post(
        reverse("write-task", args=[task.token]),
        {"answer_r1": ROUND_1 + "加油！", "answer": ROUND_2 + "加油！"},
    )
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.state == TaskState.SUBMITTED
    assert task.answer_r1.endswith("加油！") and task.answer_r2.endswith("加油！")


def test_a_returned_dialogue_with_a_bad_round_1_keeps_both_old_rounds(
    client, run, wendy, umar, staff
):
    task = write_dialogue(wendy, umar)
    services.task_return(task=task, reviewer=staff, note="再改改")
    client.force_login(wendy)
    response = client.post(
        reverse("write-task", args=[task.token]), {"answer_r1": "", "answer": ROUND_2 + "！"}
    )
    assert response.status_code == 422
    task.refresh_from_db()
    assert (task.state, task.answer_r1, task.answer_r2) == (TaskState.RETURNED, ROUND_1, ROUND_2)


def test_a_returned_dialogue_with_a_bad_round_2_keeps_the_old_round_1(
    client, run, wendy, umar, staff
):
    task = write_dialogue(wendy, umar)
    services.task_return(task=task, reviewer=staff, note="再改改")
    client.force_login(wendy)
    response = client.post(
        reverse("write-task", args=[task.token]), {"answer_r1": ROUND_1 + "！", "answer": ""}
    )
    assert response.status_code == 422
    task.refresh_from_db()
    assert (task.state, task.answer_r1, task.answer_r2) == (TaskState.RETURNED, ROUND_1, ROUND_2)


class Broker:
    """The broker as the services meet it, through the registered task: down or up."""

    def __init__(self, monkeypatch, task_name):
        from celery import current_app

        self.up = False
        task = current_app.tasks[task_name]
        send = task.apply_async

        def apply_async(*args, **kwargs):
            if not self.up:
                from kombu.exceptions import OperationalError

                raise OperationalError("Error 111 connecting to redis. Connection refused.")
            return send(*args, **kwargs)

        monkeypatch.setattr(task, "apply_async", apply_async)


def test_a_follow_up_lost_to_a_broker_outage_is_asked_for_again_by_the_beat(
    simulated_run, wendy, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.db.models import F

    from writing.tasks import followups_catch_up

    broker = Broker(monkeypatch, "writing.tasks.followup_simulate")
    task = services.task_next(user=wendy)
    with django_capture_on_commit_callbacks(execute=True):
        services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)

    task.refresh_from_db()
    assert (task.state, task.answer_r1) == (TaskState.AWAITING_FOLLOWUP, ROUND_1)
    assert "could not enqueue writing.tasks.followup_simulate" in caplog.text
    broker.up = True
    assert followups_catch_up() == []  # a follow-up may take a while: not lost yet
    WritingTask.objects.filter(pk=task.pk).update(leased_at=F("leased_at") - timedelta(minutes=6))

    assert followups_catch_up() == [task.pk]

    task.refresh_from_db()
    assert task.state == TaskState.ROUND_2 and task.question_r2
    assert followups_catch_up() == []


def test_a_dialogue_not_handed_in_is_shown_read_only_with_nothing_to_press(
    client, run, wendy, staff
):
    task = services.task_next(user=wendy)
    services.round_1_submit(user=wendy, token=task.token, text=ROUND_1)
    client.force_login(staff)

    page = client.get(reverse("write-staff-task", args=[task.pk])).content.decode()

    assert 'data-testid="not-handed-in"' in page and ROUND_1 in page
    assert "<textarea" not in page and 'name="action"' not in page


def test_a_refused_run_form_keeps_the_simulator_chosen(client, staff, luffy):
    from collection.models import ModelEndpoint

    ModelEndpoint.objects.create(name="Other", base_url="http://127.0.0.1:9/v1", model="a")
    chosen = ModelEndpoint.objects.create(
        name="User simulator", base_url="http://127.0.0.1:9/v1", model="sim"
    )
    client.force_login(staff)

    response = client.post(
        reverse("write-staff-run-create"),
        run_form(luffy, followup_mode=FollowupMode.SIMULATOR, simulator=chosen.pk, deadline="soon"),
    )

    assert response.status_code == 422
    assert f'<option value="{chosen.pk}" selected>User simulator</option>' in (
        response.content.decode()
    )


def test_a_returned_dialogue_shows_staff_the_note_they_returned_it_with(
    client, run, wendy, umar, staff
):
    task = write_dialogue(wendy, umar)
    services.task_return(task=task, reviewer=staff, note="第一轮再热情一点")
    client.force_login(staff)

    page = client.get(reverse("write-staff-task", args=[task.pk])).content.decode()

    assert "Returned to the writer" in page and "第一轮再热情一点" in page
    assert 'name="action"' not in page
