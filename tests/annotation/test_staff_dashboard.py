"""The study dashboard: progress per character, round and source, throughput, the time
to completion, open leases, flagged judgments decided with a reason, study changes, and
the audit trail that the export snapshot reads."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import selectors, services
from annotation.models import (
    AuditEvent,
    FlagKind,
    Item,
    Judgment,
    JudgmentDecision,
    QualityFlag,
)
from tests.builders import UserFactory, lease_pair
from tests.helpers import submit

pytestmark = pytest.mark.django_db


def test_progress_counts_complete_in_progress_and_not_started(study, luffy, natsume):
    items = Item.objects.filter(study=study, is_gold=False)
    luffy_round_1 = items.filter(character=luffy, round=1).order_by("pk")
    Item.objects.filter(pk=luffy_round_1[0].pk).update(judgment_count=3)  # complete
    Item.objects.filter(pk=luffy_round_1[1].pk).update(judgment_count=1)  # in progress

    progress = selectors.study_progress(study)

    total = progress["total"]
    n = items.count()
    assert (total.items, total.complete, total.in_progress) == (n, 1, 1)
    assert total.not_started == n - 2
    assert (total.judgments, total.needed) == (4, 3 * n)
    by_character = {row.label: row for row in progress["by_character"]}
    assert by_character["蒙奇·D·路飞 · Monkey D. Luffy"].complete == 1
    assert by_character["夏目贵志 · Takashi Natsume"].judgments == 0
    by_round = {row.label: row for row in progress["by_round"]}
    assert set(by_round) == {"1", "2"}
    assert by_round["1"].judgments == 4 and by_round["2"].judgments == 0
    # Every pair shows the reference answer: the human source appears in all of them.
    by_source = {row.label: row for row in progress["by_source"]}
    assert by_source["Human fans"].items == n and by_source["Human fans"].judgments == 4
    assert sum(row.items for label, row in by_source.items() if label != "Human fans") == n


def test_a_diversity_set_counts_its_judgments_once_for_its_source(demo_dataset, luffy):
    from tests.builders import make_study

    study = make_study(overlap=3, include_diversity=True, characters=[luffy])
    diversity_set = Item.objects.filter(study=study, kind="diversity").first()
    Item.objects.filter(pk=diversity_set.pk).update(judgment_count=2)
    source = diversity_set.slots.first().answer.source

    by_source = {row.label: row for row in selectors.study_progress(study)["by_source"]}

    row = by_source[source.display_name]
    assert diversity_set.slots.count() == 4
    assert (row.judgments, row.in_progress) == (2, 1)


def test_judgments_beyond_the_overlap_do_not_count_twice(study):
    item = Item.objects.filter(study=study, is_gold=False).first()
    Item.objects.filter(pk=item.pk).update(judgment_count=7)

    assert selectors.study_progress(study)["total"].judgments == 3


def test_throughput_and_the_time_to_completion(study, alice, bob):
    submit(alice, lease_pair(alice))
    submit(bob, lease_pair(bob))
    now = timezone.now()

    throughput = selectors.study_throughput(study, now=now)
    assert throughput["unit"] == "hour" and sum(throughput["counts"]) == 2
    eta = selectors.study_eta(study, remaining=48, now=now)
    assert eta["per_hour"] == pytest.approx(2 / 24)
    assert eta["hours"] == pytest.approx(48 / (2 / 24))
    assert eta["at"] == now + timedelta(hours=eta["hours"])


def test_an_old_study_counts_per_day(study, alice):
    judgment = submit(alice, lease_pair(alice))
    Judgment.objects.filter(pk=judgment.pk).update(submitted_at=timezone.now() - timedelta(days=5))

    throughput = selectors.study_throughput(study)

    assert throughput["unit"] == "day" and len(throughput["labels"]) == 6
    assert throughput["counts"][0] == 1 and sum(throughput["counts"]) == 1


def test_without_recent_judgments_there_is_no_estimate(study):
    assert selectors.study_eta(study, remaining=10)["at"] is None


def test_the_dashboard_shows_leases_and_flagged_judgments(client, manager, study, alice, bob):
    judgment = submit(alice, lease_pair(alice))
    services.assignment_next(user=bob)
    client.force_login(manager)

    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    assert 'data-testid="open-leases">1<' in html
    assert f'data-testid="flagged-{judgment.pk}"' in html
    # The ratings as given, a row per answer named by its source and a column per metric
    # (submit() rates answer a 3,4,3,4… and b 2,5,2,5…).
    [table] = re.findall(rf'data-testid="ratings-{judgment.pk}">(.*?)</table>', html, re.S)
    assert "<th>Fluency</th>" in table and "<th>Emotional value</th>" in table
    rows = re.findall(r"<tr><th>([^<]+)</th>((?:<td>\d</td>)+)</tr>", table)
    assert len(rows) == 2
    values = {re.sub(r"</?td>", " ", cells).split()[0] for _name, cells in rows}
    assert values == {"3", "2"}
    assert any(name == "Human fans" for name, _cells in rows)
    assert 'id="throughput-data"' in html and "<canvas" in html
    # A way from the top of a long page to the caps at its bottom.
    assert 'href="#caps-and-status"' in html and 'id="caps-and-status"' in html


def test_a_flagged_diversity_set_shows_its_rating_under_the_sets_source(
    client, manager, demo_dataset, luffy
):
    from tests.builders import approved_annotator, make_study
    from tests.helpers import submit_item

    study = make_study(overlap=3, include_diversity=True, characters=[luffy])
    carol = approved_annotator("carol@example.com", [luffy])
    lease = services.assignment_next(user=carol)
    assert lease.item.kind == "diversity"
    judgment = submit_item(carol, lease, value=4)  # at once: implausibly fast
    QualityFlag.objects.get(judgment=judgment, kind=FlagKind.TOO_FAST)
    client.force_login(manager)

    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    [table] = re.findall(rf'data-testid="ratings-{judgment.pk}">(.*?)</table>', html, re.S)
    rows = re.findall(r"<tr><th>([^<]+)</th>((?:<td>\d</td>)+)</tr>", table)
    source = lease.item.diversity_source
    shown = "Human fans" if source.kind == "human" else source.display_name
    assert rows == [(f"{shown} (diversity set)", "<td>4</td>")]
    assert "None" not in table


@pytest.mark.parametrize(
    ("per_hour", "shown"), [(1516.0, "1516 per hour"), (0.25, "0.25 per hour")]
)
def test_the_rate_reads_without_trailing_zeros(
    client, manager, study, monkeypatch, per_hour, shown
):
    monkeypatch.setattr(
        selectors,
        "study_eta",
        lambda study, remaining: {"per_hour": per_hour, "hours": 1, "at": None},
    )
    client.force_login(manager)

    assert shown in client.get(f"/staff/studies/{study.slug}/").content.decode()


def test_the_dashboard_says_when_only_some_flagged_judgments_are_shown(
    client, manager, study, alice, monkeypatch
):
    """A study of the published size gathers hundreds of flags; the dashboard lists the
    longest waiting only, and says so beside the count."""
    from annotation.selectors import quality

    for _ in range(3):
        submit(alice, lease_pair(alice))  # each one too fast: flagged
    client.force_login(manager)
    html = client.get(f"/staff/studies/{study.slug}/").content.decode()
    assert html.count('class="flagged"') == 3 and 'data-testid="flagged-shown"' not in html

    monkeypatch.setattr(quality, "FLAGGED_SHOWN", 2)
    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    assert html.count('class="flagged"') == 2
    [shown] = re.findall(r'data-testid="flagged-shown">([^<]*)<', html)
    assert "The 2 that have waited longest are shown" in shown


def test_excluding_a_flagged_judgment_resolves_its_flags_and_is_audited(
    client, manager, study, alice
):
    judgment = submit(alice, lease_pair(alice))
    assert QualityFlag.objects.filter(judgment=judgment, resolved_at=None).exists()
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{study.slug}/judgments/{judgment.pk}/decide/",
        {"decision": "exclude", "reason": "answered in 2 seconds"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    assert f'data-testid="flagged-{judgment.pk}"' not in response.content.decode()
    judgment.refresh_from_db()
    assert judgment.excluded
    assert not QualityFlag.objects.filter(judgment=judgment, resolved_at=None).exists()
    decision = JudgmentDecision.objects.get(judgment=judgment)
    assert decision.decided_by == manager and decision.reason == "answered in 2 seconds"
    event = AuditEvent.objects.get(action="judgment.exclude")
    assert (event.before, event.after) == ({"excluded": False}, {"excluded": True})
    assert event.study == study and event.actor == manager
    assert AuditEvent.objects.filter(action="flag.resolve").count() == 1


def test_keeping_a_flagged_judgment_leaves_it_in_the_results(client, manager, study, alice):
    judgment = submit(alice, lease_pair(alice))
    client.force_login(manager)

    client.post(
        f"/staff/studies/{study.slug}/judgments/{judgment.pk}/decide/",
        {"decision": "include", "reason": "a fast reader"},
    )

    judgment.refresh_from_db()
    assert not judgment.excluded
    assert not QualityFlag.objects.filter(judgment=judgment, resolved_at=None).exists()
    assert AuditEvent.objects.get(action="judgment.include").note == "a fast reader"


@pytest.mark.parametrize(
    "post",
    [{"decision": "exclude", "reason": "  "}, {"decision": "drop", "reason": "why not"}],
    ids=["no reason", "unknown decision"],
)
def test_a_decision_without_a_reason_changes_nothing(client, manager, study, alice, post):
    judgment = submit(alice, lease_pair(alice))
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{study.slug}/judgments/{judgment.pk}/decide/",
        post,
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 422
    assert 'role="alert"' in response.content.decode()
    judgment.refresh_from_db()
    assert not judgment.excluded
    assert QualityFlag.objects.filter(judgment=judgment, resolved_at=None).exists()
    assert not JudgmentDecision.objects.exists()
    assert not AuditEvent.objects.filter(target_type__in=["judgment", "qualityflag"]).exists()


def test_a_judgment_of_another_study_is_not_found(client, manager, study, alice):
    from tests.builders import make_study

    other = make_study()
    judgment = submit(alice, lease_pair(alice))
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{other.slug}/judgments/{judgment.pk}/decide/",
        {"decision": "exclude", "reason": "x"},
    )

    assert response.status_code == 404
    judgment.refresh_from_db()
    assert not judgment.excluded


def test_changing_the_caps_is_audited(client, manager, study):
    client.force_login(manager)

    client.post(
        f"/staff/studies/{study.slug}/caps/",
        {"cap_per_annotator": "40", "cap_per_annotator_per_day": "0"},
    )

    study.refresh_from_db()
    assert study.cap_per_annotator == 40
    event = AuditEvent.objects.get(action="study.change")
    assert (event.before, event.after) == ({"cap_per_annotator": 0}, {"cap_per_annotator": 40})


@pytest.mark.parametrize("bad", ["-3", "", "lots"])
def test_bad_caps_are_refused_and_change_nothing(client, manager, study, bad):
    client.force_login(manager)

    response = client.post(
        f"/staff/studies/{study.slug}/caps/",
        {"cap_per_annotator": "40", "cap_per_annotator_per_day": bad},
        follow=True,
    )

    assert "A cap must be a whole number" in response.content.decode()
    study.refresh_from_db()
    assert (study.cap_per_annotator, study.cap_per_annotator_per_day) == (0, 0)
    assert not AuditEvent.objects.filter(action="study.change").exists()


def test_a_status_change_is_audited_and_an_unknown_status_refused(client, manager, study):
    client.force_login(manager)

    client.post(f"/staff/studies/{study.slug}/status/", {"status": "paused"})
    refused = client.post(f"/staff/studies/{study.slug}/status/", {"status": "gone"}, follow=True)

    study.refresh_from_db()
    assert study.status == "paused"
    assert "Unknown study status." in refused.content.decode()
    event = AuditEvent.objects.get(action="study.pause")
    assert (event.before, event.after, event.actor) == (
        {"status": "open"},
        {"status": "paused"},
        manager,
    )


def test_a_study_edited_in_the_admin_is_audited_field_by_field(admin_client, study):
    from django.forms.models import model_to_dict

    data = {
        key: value
        for key, value in model_to_dict(study).items()
        if value is not None and key not in ("id", "status")
    }
    data["compared_sources"] = [s.pk for s in data["compared_sources"]]
    data["characters"] = [c.pk for c in data["characters"]]
    data["scenarios"] = [s.pk for s in data["scenarios"]]
    data["rounds"] = ["1", "2"]
    data["lease_minutes"] = 45

    response = admin_client.post(f"/admin/annotation/study/{study.pk}/change/", data)

    assert response.status_code == 302, response.content.decode()[:2000]
    event = AuditEvent.objects.get(action="study.change")
    assert event.before == {"lease_minutes": 30} and event.after == {"lease_minutes": 45}


def test_the_study_audit_rows_cover_decisions_about_its_annotators(manager, study, alice):
    from annotation.models import AnnotatorProfile, Qualification

    qualification = Qualification.objects.get(profile__user=alice)
    services.qualification_review(
        qualification=qualification, reviewer=manager, approve=True, note="ok"
    )
    judgment = submit(alice, lease_pair(alice))
    services.judgment_exclude(judgment=judgment, decided_by=manager, reason="too fast")
    services.annotator_suspend(
        profile=AnnotatorProfile.objects.get(user=alice), actor=manager, reason="pause"
    )

    rows = selectors.audit_events_for_study(study)

    assert [row["action"] for row in rows] == [
        "study.create",
        "study.open",
        "qualification.approve",
        "judgment.exclude",
        "annotator.suspend",
    ]
    assert rows[0]["after"]["overlap"] == 3 and rows[0]["after"]["rounds"] == [1, 2]
    exclusion = rows[3]
    assert exclusion["actor"] == "manager@example.com"
    assert exclusion["before"] == {"excluded": False} and exclusion["after"] == {"excluded": True}
    assert exclusion["target_type"] == "judgment" and exclusion["target_id"] == str(judgment.pk)
    # Annotators appear by pseudonym only.
    assert all("alice@" not in str(row) for row in rows)


def test_the_audit_page_lists_and_filters_events(admin_client, manager, study, alice):
    from annotation.models import AnnotatorProfile

    services.annotator_suspend(
        profile=AnnotatorProfile.objects.get(user=alice), actor=manager, reason="a reason"
    )

    everything = admin_client.get("/staff/audit/").content.decode()
    suspensions = admin_client.get("/staff/audit/?action=study.open").content.decode()

    assert "a reason" in everything and "manager@example.com" in everything
    assert "a reason" not in suspensions


def test_marking_a_gold_item_in_the_admin_is_audited(admin_client, study):
    item = Item.objects.filter(study=study).first()

    admin_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        {
            "is_gold": "on",
            "gold_expectations-TOTAL_FORMS": "0",
            "gold_expectations-INITIAL_FORMS": "0",
        },
    )

    item.refresh_from_db()
    assert item.is_gold
    event = AuditEvent.objects.get(target_type="item")
    assert (event.before, event.after, event.study) == (
        {"is_gold": False},
        {"is_gold": True},
        study,
    )


def test_editing_a_gold_items_expected_ranges_in_the_admin_is_audited(admin_client, study):
    item = Item.objects.filter(study=study, kind="pair").first()
    Item.objects.filter(pk=item.pk).update(is_gold=True)
    answer = item.slots.first().answer
    inline = {"gold_expectations-INITIAL_FORMS": "0", "gold_expectations-TOTAL_FORMS": "1"}

    response = admin_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        {
            "is_gold": "on",
            **inline,
            "gold_expectations-0-answer": str(answer.pk),
            "gold_expectations-0-metric": "",
            "gold_expectations-0-minimum": "4",
            "gold_expectations-0-maximum": "5",
        },
    )

    assert response.status_code == 302
    event = AuditEvent.objects.get(target_type="item")
    assert event.before == {"gold_expectations": []}
    assert event.after == {
        "gold_expectations": [{"answer": answer.pk, "metric": "", "minimum": 4, "maximum": 5}]
    }
    assert event.study == study

    # Saving the page again without a change records nothing new.
    expectation = item.gold_expectations.get()
    admin_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        {
            "is_gold": "on",
            "gold_expectations-INITIAL_FORMS": "1",
            "gold_expectations-TOTAL_FORMS": "1",
            "gold_expectations-0-id": str(expectation.pk),
            "gold_expectations-0-item": str(item.pk),
            "gold_expectations-0-answer": str(answer.pk),
            "gold_expectations-0-metric": "",
            "gold_expectations-0-minimum": "4",
            "gold_expectations-0-maximum": "5",
        },
    )
    assert AuditEvent.objects.filter(target_type="item").count() == 1


def test_a_submitted_judgment_cannot_be_deleted_in_the_admin(admin_client, study, alice):
    judgment = submit(alice, lease_pair(alice))

    response = admin_client.post(
        f"/admin/annotation/judgment/{judgment.pk}/delete/", {"post": "yes"}
    )

    assert response.status_code == 403
    assert Judgment.objects.filter(pk=judgment.pk).exists()


def test_reopening_an_open_study_records_nothing(study):
    services.study_open(study=study)

    assert AuditEvent.objects.filter(action="study.open").count() == 1


def test_the_dashboard_lists_annotators_flagged_for_low_agreement(client, manager, study, alice):
    flag = QualityFlag.objects.create(
        annotator=alice, study=study, kind="low_agreement", figures={"distance": 2.1, "ratings": 40}
    )
    client.force_login(manager)

    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    assert f'data-testid="flagged-annotator-{flag.pk}"' in html and "mean distance 2.1" in html


def test_an_exclusion_recomputes_the_results_without_the_judgment(
    client, manager, study, alice, bob, django_capture_on_commit_callbacks
):
    from annotation.models import StudyResults

    kept = submit(bob, lease_pair(bob))
    judgment = submit(alice, lease_pair(alice))
    services.study_recompute(study=study)
    assert StudyResults.objects.get(study=study).judgments == 2
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/staff/studies/{study.slug}/judgments/{judgment.pk}/decide/",
            {"decision": "exclude", "reason": "too fast"},
        )

    assert StudyResults.objects.get(study=study).judgments == 1
    assert not Judgment.objects.get(pk=kept.pk).excluded


def test_a_paused_study_has_no_completion_estimate(client, manager, study, alice):
    submit(alice, lease_pair(alice))
    services.study_set_status(study=study, status="paused", actor=manager)
    client.force_login(manager)

    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    assert "the study is not open" in html


@pytest.mark.parametrize(
    ("language", "said", "not_said"),
    [
        (
            "en",
            [
                "below the study&#x27;s minimum of 15 s",
                "paused automatically after 1 open quality flag in Test study",
            ],
            ["低于本研究的最短用时", "已自动暂停"],
        ),
        (
            "zh-hans",
            ["低于本研究的最短用时 15 秒", "在“Test study”中有 1 个未处理的质量标记，已自动暂停"],
            ["below the study", "paused automatically"],
        ),
    ],
)
def test_flags_and_automatic_pauses_are_put_into_words_in_the_reader_language(
    client, manager, study, alice, settings, language, said, not_said
):
    from annotation.models import AnnotatorProfile

    study.min_seconds_per_item, study.pause_after_flags = 15, 1
    study.save()
    judgment = submit(alice, lease_pair(alice))  # too fast: flagged, then paused
    assert judgment.flags.get().kind == "too_fast"
    settings.LANGUAGE_CODE = language
    client.force_login(manager)

    profile = AnnotatorProfile.objects.get(user=alice)
    html = (
        client.get(f"/staff/studies/{study.slug}/").content.decode()
        + client.get(f"/staff/annotators/{profile.pk}/").content.decode()
    )
    client.force_login(UserFactory(email="root@example.com", is_staff=True, is_superuser=True))
    audit = client.get("/staff/audit/").content.decode()

    for sentence in said:
        assert sentence in html
    assert said[-1] in audit
    for sentence in not_said:
        assert sentence not in html


def test_the_studies_page_says_where_a_new_study_is_made(client, study):
    from django.urls import reverse

    from tests.builders import study_manager_named

    admin = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get(reverse("staff-studies")).content.decode()
    assert reverse("admin:annotation_study_add") in page
    assert "manage.py create_study" in page
    # A manager without the admin's add permission is told of the command, not sent to
    # a form that would refuse them.
    client.force_login(study_manager_named("manager@example.com"))
    page = client.get(reverse("staff-studies")).content.decode()
    assert reverse("admin:annotation_study_add") not in page
    assert "manage.py create_study" in page
    # and not told to choose sources in a form they cannot open
    assert "New studies are made by an admin" in page
    assert "choose its sources" not in page


@pytest.mark.parametrize(
    ("language", "notice", "eta"),
    [
        ("en", "A draft: the study is not open yet.", "not open yet"),
        ("zh-hans", "草稿：评测尚未开放。", "尚未开放"),
    ],
)
def test_a_draft_without_items_says_it_is_not_open_yet(
    client, manager, demo_dataset, luffy, language, notice, eta
):
    """Not 0 / 0 (100%) and "complete": nothing has been asked of anyone yet."""
    from dialogues.models import Source, SourceKind

    draft = services.study_create(
        name="Draft study",
        reference=Source.objects.get(kind=SourceKind.HUMAN),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=[luffy],
    )
    client.force_login(manager)
    client.cookies["django_language"] = language

    html = client.get(f"/staff/studies/{draft.slug}/").content.decode()

    summary = html.split('data-testid="summary"', 1)[1].split("</dl>", 1)[0]
    assert "100%" not in summary and "complete" not in summary and "已完成</dd>" not in summary
    assert summary.split('data-testid="eta">', 1)[1].split("</dd>", 1)[0] == eta
    assert 'data-testid="no-items"' in html and notice in html


@pytest.fixture
def flagged_by_kind(study, alice):
    """Three judgments flagged too fast (every quick submission is), one of them also
    with a flag of another kind, and a fourth judgment with that other kind only."""
    judgments = [submit(alice, lease_pair(alice)) for _ in range(4)]
    assert all(j.flags.filter(kind=FlagKind.TOO_FAST).exists() for j in judgments)
    QualityFlag.objects.filter(judgment=judgments[3], kind=FlagKind.TOO_FAST).delete()
    for judgment in judgments[2:]:
        QualityFlag.objects.create(
            study=study, annotator=alice, judgment=judgment, kind=FlagKind.STRAIGHT_LINING
        )
    return judgments


def test_every_judgment_with_a_flag_of_one_kind_is_decided_at_once(
    client, manager, study, flagged_by_kind
):
    client.force_login(manager)
    page = client.get(f"/staff/studies/{study.slug}/").content.decode()
    assert 'data-testid="flags-decide"' in page and "Implausibly fast (3)" in page

    response = client.post(
        f"/staff/studies/{study.slug}/flags/decide/",
        {"kind": "too_fast", "decision": "exclude", "reason": "under 2 s each"},
        follow=True,
    )

    assert "3 judgments flagged “Implausibly fast”: decision recorded." in (
        response.content.decode()
    )
    fast, other = flagged_by_kind[:3], flagged_by_kind[3]
    for judgment in fast:
        judgment.refresh_from_db()
        assert judgment.excluded and not judgment.flags.filter(resolved_at__isnull=True).exists()
        assert judgment.decisions.get().reason == "under 2 s each"
    other.refresh_from_db()
    assert not other.excluded and other.flags.filter(resolved_at__isnull=True).count() == 1


@pytest.mark.parametrize(
    ("posted", "message"),
    [
        ({"kind": "too_fast", "decision": "exclude", "reason": "  "}, "Please give a reason."),
        ({"kind": "mischief", "decision": "exclude", "reason": "x"}, "Choose a kind of flag."),
        ({"kind": "too_fast", "decision": "delete", "reason": "x"}, "Choose keep or exclude."),
    ],
)
def test_a_decision_of_all_flags_without_a_reason_or_kind_changes_nothing(
    client, manager, study, flagged_by_kind, posted, message
):
    client.force_login(manager)
    open_flags = QualityFlag.objects.filter(resolved_at__isnull=True).count()

    response = client.post(f"/staff/studies/{study.slug}/flags/decide/", posted, follow=True)

    assert message in response.content.decode()
    assert QualityFlag.objects.filter(resolved_at__isnull=True).count() == open_flags
    assert not Judgment.objects.filter(excluded=True).exists()
