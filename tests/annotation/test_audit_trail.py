"""The audit trail as study managers read it: every action by a human name in English
and Chinese, writing and collection actions among the filter's choices, and a manager
finds their own review of a fan's dialogue there."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from annotation.models import AuditAction, AuditEvent
from dialogues.models import Scenario
from tests.builders import (
    FOLLOWUP,
    ROUND_1,
    ROUND_2,
    make_run,
    make_writer,
    study_manager_named,
)
from writing import services

pytestmark = pytest.mark.django_db

WRITING_ACTIONS = ["writer.approve", "writer.reject", "writing.accept", "writing.return"]
WRITING_ACTIONS += ["writing.edit"]
COLLECTION_ACTIONS = [
    "collection.run_start",
    "collection.run_pause",
    "collection.run_resume",
    "collection.run_cancel",
    "collection.accept",
    "collection.edit",
    "collection.regenerate",
]


@pytest.fixture
def manager(db):
    user = study_manager_named("manager@example.com")
    return user


@pytest.fixture
def reviewed(luffy, manager):
    """A fan's dialogue that the manager edited and returned on the review page."""
    run = make_run([luffy], list(Scenario.objects.order_by("number")[:1]))
    writer = make_writer("wendy@example.com", [luffy])
    player = make_writer("umar@example.com", [luffy])
    task = services.task_next(user=writer)
    services.round_1_submit(user=writer, token=task.token, text=ROUND_1)
    followup = services.followup_next(user=player)
    services.followup_submit(user=player, followup_token=followup.followup_token, text=FOLLOWUP)
    task = services.round_2_submit(user=writer, token=task.token, text=ROUND_2)
    return run, task


def what_column(html: str) -> list[str]:
    return re.findall(r'<td data-label="(?:What|操作)">(.*?)</td>', html, re.S)


def test_a_manager_finds_their_own_edit_of_a_dialogue_in_the_trail(client, manager, reviewed):
    _, task = reviewed
    client.force_login(manager)
    response = client.post(
        reverse("write-staff-task", args=[task.pk]),
        {
            "action": "edit",
            "answer_r1": ROUND_1 + "！",
            "question_r2": FOLLOWUP,
            "answer_r2": ROUND_2,
        },
    )
    assert response.status_code == 302

    page = client.get("/staff/audit/?action=writing.edit")

    assert page.status_code == 200
    html = page.content.decode()
    assert what_column(html) == ["Dialogue edited by staff"]
    assert "manager@example.com" in html
    assert 'href="/staff/audit/"' in client.get("/staff/").content.decode()


def test_every_action_has_a_name_in_english_and_chinese():
    for code, label in AuditAction.choices:
        with translation.override("en"):
            english = str(label)
        with translation.override("zh-hans"):
            chinese = str(label)
        assert english != code and "." not in english, code
        assert chinese != english and re.search(r"[\u4e00-\u9fff]", chinese), code


def test_the_writing_actions_read_as_words_not_codes(client, manager, reviewed, settings):
    _, task = reviewed
    services.task_return(task=task, reviewer=manager, note="再热情一点")
    client.force_login(manager)

    english = client.get("/staff/audit/").content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = client.get("/staff/audit/").content.decode()

    assert "Dialogue returned to the writer" in what_column(english)
    assert "Writer approved" in what_column(english)
    assert "对话已退回写手" in what_column(chinese)
    for html in (english, chinese):
        assert not any(re.fullmatch(r"[a-z_]+\.[a-z_]+", cell) for cell in what_column(html))


def test_the_filter_offers_writing_and_collection_actions(client, manager):
    client.force_login(manager)

    html = client.get("/staff/audit/").content.decode()

    offered = re.findall(r'<option value="([a-z_]+\.[a-z_]+)"', html)
    for code in WRITING_ACTIONS + COLLECTION_ACTIONS:
        assert code in offered, code
    assert "<optgroup" in html


def test_filtering_by_a_writing_action_shows_only_it(client, manager, reviewed):
    _, task = reviewed
    services.task_accept(task=task, reviewer=manager)
    client.force_login(manager)

    html = client.get("/staff/audit/?action=writing.accept").content.decode()

    assert what_column(html) == ["Dialogue accepted"]
    assert AuditEvent.objects.filter(action="writer.approve").count() == 2


def test_an_unknown_action_in_the_filter_is_refused_and_lists_nothing_strange(client, manager):
    client.force_login(manager)

    response = client.get("/staff/audit/?action=<script>")

    assert response.status_code in (200, 400)
    assert "<script>" not in response.content.decode()


def test_what_changed_is_named_in_words_in_english_and_chinese(client, manager, reviewed, settings):
    _, task = reviewed
    services.task_return(task=task, reviewer=manager, note="再热情一点")
    client.force_login(manager)

    english = client.get("/staff/audit/").content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = client.get("/staff/audit/").content.decode()

    assert "<code>state</code>" in english and "<code>review note</code>" in english
    assert "<code>状态</code>" in chinese and "<code>审核备注</code>" in chinese
    assert "<code>review_note</code>" not in english + chinese


def test_every_field_the_services_record_has_a_name():
    """A field recorded by an audited service and shown raw would read as a code."""
    from pathlib import Path

    from annotation.templatetags.annotation_extras import CHANGE_LABELS

    root = Path(__file__).resolve().parents[2]
    recorded = set()
    for app in ("annotation", "collection", "writing", "panels"):
        for path in (root / app / "services").rglob("*.py"):
            for call in re.findall(r"audit\.record\((.*?)\n    \)", path.read_text(), re.S):
                for side in re.findall(r"(?:before|after)=\{(.*?)\}", call, re.S):
                    recorded.update(re.findall(r'"([a-z_0-9]+)":', side))
    assert recorded, "the audited services were not found"
    assert sorted(recorded - set(CHANGE_LABELS)) == []


def test_sources_characters_and_states_are_named_not_numbered(client, manager, luffy, settings):
    """A study's creation and opening as staff know them: the sources and characters by
    name, states and yes/no in the page's language, not ids and codes."""
    from tests.builders import make_study

    make_study(characters=[luffy])
    client.force_login(manager)

    english = client.get("/staff/audit/").content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = client.get("/staff/audit/").content.decode()

    assert re.search(r"<code>reference source</code>\s*Human fans<", english)
    assert re.search(r"<code>characters</code>\s*蒙奇·D·路飞 · Monkey D. Luffy<", english)
    assert re.search(r"<code>status</code>\s*Open<", english)
    assert re.search(r"<code>items generated</code>\s*yes<", english)
    assert "人类粉丝" in chinese
    assert re.search(r"<code>[^<]*</code>\s*是<", chinese)
    assert "True" not in english + chinese
    assert not re.search(r"<code>[^<]*</code>\s*\[\d", english + chinese)  # no list of ids


def test_a_count_recorded_under_characters_is_shown_as_a_count(client, manager, luffy):
    """Collection runs once recorded how many characters they covered: 1 is a count there,
    not the character whose id is 1."""
    from annotation.models import AuditEvent

    AuditEvent.objects.create(
        action="collection.run_start",
        target_type="collectionrun",
        target_id="1",
        target_label="kimi #1",
        after={"characters": luffy.pk, "scenarios": 2},
    )
    client.force_login(manager)

    html = client.get("/staff/audit/").content.decode()

    assert re.search(rf"<code>characters</code>\s*{luffy.pk}<", html)
    assert luffy.name_zh not in html


def test_a_membership_with_no_characters_chosen_reads_as_all_approved(
    client, manager, study, alice, settings
):
    from annotation import services

    services.membership_add(study=study, annotator=alice, actor=manager)
    client.force_login(manager)

    english = client.get("/staff/audit/").content.decode()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = client.get("/staff/audit/").content.decode()

    assert re.search(r"<code>characters</code>\s*all approved<", english)
    assert "全部已批准角色" in chinese


def test_pausing_resuming_and_closing_a_study_read_as_such(client, manager, study, settings):
    """A manager who paused a study and opened it again reads a pause and a resumption,
    not an opening; in both languages."""
    client.force_login(manager)
    for status in ("paused", "open", "closed"):
        client.post(f"/staff/studies/{study.slug}/status/", {"status": status})

    english = what_column(client.get(f"/staff/audit/?study={study.pk}").content.decode())
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = what_column(client.get(f"/staff/audit/?study={study.pk}").content.decode())

    # Newest first: the closing, the resumption, the pause, the first opening, the creation.
    assert english == [
        "Study closed",
        "Study resumed",
        "Study paused",
        "Study opened",
        "Study created",
    ]
    assert chinese[:3] == ["评测已结束", "评测已恢复", "评测已暂停"]  # as the status reads: 已结束
    resumed = client.get("/staff/audit/?action=study.resume").content.decode()
    assert what_column(resumed) == ["评测已恢复"]


def test_a_pause_and_resumption_recorded_before_they_had_names_read_as_such(client, manager, study):
    """Older rows recorded a pause as a status change and a resumption as an opening; the
    page reads them by what they changed."""
    for action, before, after in [
        ("study.status", {"status": "open"}, {"status": "paused"}),
        ("study.open", {"status": "paused"}, {"status": "open", "items_generated": False}),
        ("study.status", {"status": "open"}, {"status": "draft"}),
    ]:
        AuditEvent.objects.create(
            action=action,
            target_type="study",
            target_id=str(study.pk),
            target_label=study.name,
            study=study,
            before=before,
            after=after,
        )
    client.force_login(manager)

    html = client.get(f"/staff/audit/?study={study.pk}").content.decode()

    assert what_column(html)[:3] == ["Study status changed", "Study resumed", "Study paused"]

    # The filter finds each row by the name it shows, as a pause and not a status change.
    def found(action):
        return what_column(client.get(f"/staff/audit/?action={action}").content.decode())

    assert found("study.pause") == ["Study paused"]
    assert found("study.resume") == ["Study resumed"]
    assert found("study.status") == ["Study status changed"]
    assert "Study resumed" not in found("study.open")


def test_an_event_on_the_study_itself_names_it_once(client, manager, study):
    """The target is the study: its name is not repeated under it as the event's study."""
    from annotation import services as annotation_services

    annotation_services.study_set_status(study=study, status="paused", actor=manager)
    client.force_login(manager)

    html = client.get("/staff/audit/?action=study.pause").content.decode()

    [target] = re.findall(r'<td data-label="Target">(.*?)</td>', html, re.S)
    assert target.count(study.name) == 1
