"""Screening review by study managers: the queue, decisions with notes, in bulk, the
email the applicant gets, the audit trail, and refusals that change nothing."""

import re

import pytest
from django.core import mail

from annotation import services
from annotation.models import (
    AnnotatorProfile,
    AuditEvent,
    ProfileStatus,
    Qualification,
    QualificationStatus,
)
from tests.builders import UserFactory, applicant_who_passed

pytestmark = pytest.mark.django_db


def test_the_queue_shows_scores_samples_and_consent(client, manager, question_bank, luffy):
    applicant_who_passed("fan@example.com", [luffy], sample="吃饱了肉再努力一次！")
    client.force_login(manager)

    html = client.get("/staff/screening/").content.decode()

    assert "fan@example.com" in html
    assert "吃饱了肉再努力一次！" in html
    assert "100%" in html
    assert "✓" in html  # consent given


def test_approving_from_the_queue_gives_work_emails_and_audits(
    client, manager, question_bank, luffy, django_capture_on_commit_callbacks
):
    fan = applicant_who_passed("fan@example.com", [luffy])
    qualification = Qualification.objects.get(profile__user=fan)
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/staff/screening/review/",
            {"qualification": [qualification.pk], "decision": "approve", "note": "欢迎！"},
            headers={"HX-Request": "true"},
        )

    assert response.status_code == 200
    assert f'data-testid="application-{qualification.pk}"' not in response.content.decode()
    qualification.refresh_from_db()
    assert qualification.status == QualificationStatus.APPROVED
    assert qualification.reviewed_by == manager and qualification.review_note == "欢迎！"
    assert services.assignment_next(user=fan).item.character == luffy
    [email] = mail.outbox
    assert email.to == ["fan@example.com"]
    assert "欢迎！" in email.body and "/screening/" in email.body
    event = AuditEvent.objects.get(action="qualification.approve")
    assert event.actor == manager and event.target_id == str(qualification.pk)
    assert event.before["status"] == "passed" and event.before["profile_status"] == "screening"
    assert event.after == {
        "status": "approved",
        "profile_status": "approved",
        "review_note": "欢迎！",
    }
    # The applicant sees the result and the note on their screening page.
    client.force_login(fan)
    page = client.get("/screening/").content.decode()
    assert "Approved" in page and "欢迎！" in page


def test_a_bulk_rejection_sends_one_email_per_applicant(
    client, manager, question_bank, luffy, natsume, django_capture_on_commit_callbacks
):
    fan = applicant_who_passed("fan@example.com", [luffy, natsume])
    other = applicant_who_passed("other@example.com", [luffy])
    ids = list(Qualification.objects.values_list("pk", flat=True))
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/staff/screening/review/",
            {"qualification": ids, "decision": "reject", "note": "样本太短"},
        )

    assert response.status_code == 302
    assert set(Qualification.objects.values_list("status", flat=True)) == {"rejected"}
    assert AnnotatorProfile.objects.get(user=fan).status == ProfileStatus.REJECTED
    assert AnnotatorProfile.objects.get(user=other).status == ProfileStatus.REJECTED
    assert sorted(m.to[0] for m in mail.outbox) == ["fan@example.com", "other@example.com"]
    fan_mail = next(m for m in mail.outbox if m.to == ["fan@example.com"])
    assert fan_mail.body.count("样本太短") == 2  # one line per character
    assert AuditEvent.objects.filter(action="qualification.reject").count() == 3


def test_a_claim_without_a_quiz_refuses_the_whole_batch(
    client, manager, question_bank, luffy, natsume, django_capture_on_commit_callbacks
):
    passed = applicant_who_passed("fan@example.com", [luffy])
    untested = UserFactory(email="untested@example.com")
    services.consent_give(user=untested)
    services.characters_claim(user=untested, characters=[natsume])
    ids = list(Qualification.objects.values_list("pk", flat=True))
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/staff/screening/review/",
            {"qualification": ids, "decision": "approve"},
            headers={"HX-Request": "true"},
        )

    assert response.status_code == 422
    assert "has not taken the quiz" in response.content.decode()
    assert Qualification.objects.get(profile__user=passed).status == "passed"
    assert Qualification.objects.get(profile__user=untested).status == "claimed"
    assert mail.outbox == []
    assert not AuditEvent.objects.filter(target_type="qualification").exists()


@pytest.mark.parametrize(
    "post",
    [
        {"decision": "approve"},  # nothing chosen
        {"decision": "approve", "qualification": ["999999"]},  # unknown id
        {"decision": "maybe", "qualification": ["{pk}"]},  # unknown decision
        {"decision": "approve", "qualification": ["²"]},  # a digit int() refuses
    ],
    ids=["nothing chosen", "unknown application", "unknown decision", "superscript digit"],
)
def test_bad_review_requests_get_a_clear_error_and_change_nothing(
    client, manager, question_bank, luffy, post, django_capture_on_commit_callbacks
):
    fan = applicant_who_passed("fan@example.com", [luffy])
    qualification = Qualification.objects.get(profile__user=fan)
    post = {
        key: [v.format(pk=qualification.pk) for v in value] if isinstance(value, list) else value
        for key, value in post.items()
    }
    client.force_login(manager)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/staff/screening/review/", post, headers={"HX-Request": "true"})

    assert response.status_code == 422
    assert 'class="error"' in response.content.decode()
    qualification.refresh_from_db()
    assert qualification.status == "passed"
    assert mail.outbox == []
    assert not AuditEvent.objects.filter(target_type="qualification").exists()


def test_the_applicant_page_decides_per_character(client, manager, question_bank, luffy, natsume):
    fan = applicant_who_passed("fan@example.com", [luffy, natsume])
    profile = AnnotatorProfile.objects.get(user=fan)
    luffy_q = Qualification.objects.get(profile=profile, character=luffy)
    client.force_login(manager)

    assert client.get(f"/staff/applicants/{profile.pk}/").status_code == 200
    response = client.post(
        "/staff/screening/review/",
        {
            "qualification": [luffy_q.pk],
            "decision": "approve",
            "next": f"/staff/applicants/{profile.pk}/",
        },
    )

    assert response["Location"] == f"/staff/applicants/{profile.pk}/"
    statuses = dict(Qualification.objects.values_list("character_id", "status"))
    assert statuses == {luffy.pk: "approved", natsume.pk: "passed"}


def test_the_admin_action_goes_through_the_audited_review(admin_client, question_bank, luffy):
    fan = applicant_who_passed("fan@example.com", [luffy])
    qualification = Qualification.objects.get(profile__user=fan)

    admin_client.post(
        "/admin/annotation/qualification/",
        {"action": "approve", "_selected_action": [qualification.pk]},
    )

    qualification.refresh_from_db()
    assert qualification.status == "approved"
    assert AuditEvent.objects.get(target_type="qualification").action == "qualification.approve"


def test_the_decision_email_is_in_the_platforms_default_language(
    manager, question_bank, luffy, settings, django_capture_on_commit_callbacks
):
    settings.LANGUAGE_CODE = "zh-hans"
    fan = applicant_who_passed("fan@example.com", [luffy])

    with django_capture_on_commit_callbacks(execute=True):
        services.qualification_review(
            qualification=Qualification.objects.get(profile__user=fan),
            reviewer=manager,
            approve=False,
            note="角色扮演样例太短",
        )

    [email] = mail.outbox
    assert email.subject == "你的 ChatAnime 申请已审核"
    assert "已拒绝" in email.body and "角色扮演样例太短" in email.body


def test_a_rolled_back_review_sends_no_email(
    manager, question_bank, luffy, django_capture_on_commit_callbacks
):
    from django.db import transaction

    fan = applicant_who_passed("fan@example.com", [luffy])

    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        services.qualification_review(
            qualification=Qualification.objects.get(profile__user=fan),
            reviewer=manager,
            approve=True,
        )
        raise RuntimeError("the surrounding work failed")

    assert mail.outbox == []
    assert Qualification.objects.get(profile__user=fan).status == "passed"


def test_filters_with_digits_that_are_not_plain_numbers_are_ignored(client, manager, study):
    client.force_login(manager)
    assert client.get("/staff/screening/", {"character": "²"}).status_code == 200
    client.force_login(UserFactory(email="root@example.com", is_staff=True, is_superuser=True))
    assert client.get("/staff/audit/", {"study": "²"}).status_code == 200


def test_the_status_filter_counts_follow_a_decision(client, manager, question_bank, luffy):
    fan = applicant_who_passed("fan@example.com", [luffy])
    qualification = Qualification.objects.get(profile__user=fan)
    client.force_login(manager)
    page = client.get("/staff/screening/").content.decode()
    assert re.search(r'<option value="passed"[^>]*>[^<]*\(1\)', page)

    response = client.post(
        "/staff/screening/review/",
        {"qualification": [qualification.pk], "decision": "approve"},
        headers={"HX-Request": "true"},
    )

    html = response.content.decode()
    # The filter above the queue is replaced out of band, with the emptied queue's count.
    [select] = re.findall(
        r'<select name="status" id="status-filter" hx-swap-oob="true">.*?</select>', html, re.S
    )
    assert re.search(r'<option value="passed"[^>]*>[^<]*\(0\)', select)
    assert re.search(r'<option value="approved"[^>]*>[^<]*\(1\)', select)


def test_simulated_annotators_are_not_counted_as_screened(client, manager, question_bank, luffy):
    """simulate_study's annotators are qualified by the simulation: the screening page's
    figures count people, as the annotators page does."""
    from tests.builders import approved_annotator

    approved_annotator("person@example.com", [luffy])
    simulated = approved_annotator("sim@example.com", [luffy])
    AnnotatorProfile.objects.filter(user=simulated).update(simulated=True)
    client.force_login(manager)

    page = client.get("/staff/screening/", {"status": "approved"}).content.decode()

    assert re.search(r'<option value="approved"[^>]*>[^<]*\(1\)', page)
    assert "person@example.com" in page
    assert "sim@example.com" not in page


@pytest.mark.parametrize(
    ("language", "subject"),
    [
        ("en", "Your ChatAnime application has been reviewed"),
        ("zh-hans", "你的 ChatAnime 申请已审核"),
    ],
)
def test_the_decision_email_is_in_the_language_the_applicant_consented_in(
    client,
    manager,
    question_bank,
    luffy,
    settings,
    django_capture_on_commit_callbacks,
    language,
    subject,
):
    settings.LANGUAGE_CODE = "zh-hans"  # the platform's default, not the applicant's
    fan = UserFactory(email="fan@example.com")
    client.force_login(fan)
    client.cookies["django_language"] = language
    client.post("/screening/consent/", {"agree": "yes"})
    assert AnnotatorProfile.objects.get(user=fan).language == language
    services.characters_claim(user=fan, characters=[luffy])
    qualification = Qualification.objects.get(profile__user=fan)
    right = {q.pk: q.correct_choice for q in services.quiz_questions(qualification=qualification)}
    services.quiz_submit(user=fan, character=luffy, choices=right, roleplay_sample="没事的！")

    with django_capture_on_commit_callbacks(execute=True):
        services.qualification_review(
            qualification=Qualification.objects.get(profile__user=fan),
            reviewer=manager,
            approve=True,
            note="",
        )

    [email] = mail.outbox
    assert email.subject == subject
