"""Becoming an annotator: consent, character claims, quizzes and staff approval."""

from io import StringIO

import pytest
from django.contrib.admin.sites import AdminSite
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import RequestFactory
from django.utils import timezone

from annotation import services, sql
from annotation.admin import QualificationAdmin
from annotation.models import (
    AnnotatorProfile,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
)
from annotation.selectors import Step, annotator_step
from annotation.selectors.screening import ready_condition
from dialogues.models import Character
from tests.builders import UserFactory, lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def applicant(study):
    return UserFactory(email="applicant@example.com")


def right_answers(qualification):
    return {q.pk: q.correct_choice for q in services.quiz_questions(qualification=qualification)}


def test_a_new_account_starts_at_consent(client, applicant):
    client.force_login(applicant)

    assert client.get("/screening/")["Location"] == "/screening/consent/"
    assert client.get("/annotate/")["Location"] == "/screening/"


def test_consent_needs_the_box_ticked(client, applicant):
    client.force_login(applicant)

    refused = client.post("/screening/consent/", {})
    given = client.post("/screening/consent/", {"agree": "yes"})

    assert refused.status_code == 422
    assert given["Location"] == "/screening/characters/"
    assert AnnotatorProfile.objects.get(user=applicant).consented_at is not None


def test_consent_page_explains_the_distressing_content_and_the_right_to_stop(client, applicant):
    client.force_login(applicant)

    html = client.get("/screening/consent/").content.decode()

    assert "stress or sadness" in html
    assert "stop at any time" in html


def test_characters_cannot_be_claimed_before_consent(client, applicant, luffy):
    client.force_login(applicant)

    response = client.post("/screening/characters/", {"character": [luffy.pk]})

    assert response["Location"] == "/screening/consent/"
    assert not Qualification.objects.exists()


def test_claiming_no_character_is_refused(client, applicant):
    services.consent_give(user=applicant)
    client.force_login(applicant)

    response = client.post("/screening/characters/", {})

    assert response.status_code == 422
    assert "at least one character" in response.content.decode()


def test_claimed_characters_lead_to_their_quizzes(client, applicant, luffy, natsume, question_bank):
    services.consent_give(user=applicant)
    client.force_login(applicant)

    client.post("/screening/characters/", {"character": [luffy.pk, natsume.pk]})
    html = client.get("/screening/").content.decode()

    assert annotator_step(applicant) == Step.QUIZ
    assert f"/screening/quiz/{luffy.pk}/" in html and f"/screening/quiz/{natsume.pk}/" in html


def pass_the_quiz(client, applicant, luffy) -> Qualification:
    """Consent, claim Luffy and pass his quiz through the page, logged in as `applicant`."""
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    client.force_login(applicant)
    form = {f"q{pk}": str(choice) for pk, choice in right_answers(qualification).items()}
    form["roleplay_sample"] = "别灰心！下次一起加油吧！"
    client.post(f"/screening/quiz/{luffy.pk}/", form)
    return qualification


def test_passing_the_quiz_waits_for_staff_review(client, applicant, luffy, question_bank):
    qualification = pass_the_quiz(client, applicant, luffy)

    qualification.refresh_from_db()
    assert qualification.status == QualificationStatus.PASSED
    assert qualification.quiz_score == 1.0
    assert qualification.roleplay_sample == "别灰心！下次一起加油吧！"
    assert annotator_step(applicant) == Step.WAITING
    assert client.get("/annotate/")["Location"] == "/screening/"


def test_rate_answers_while_waiting_says_why_it_leads_to_screening(
    client, applicant, luffy, question_bank
):
    pass_the_quiz(client, applicant, luffy)

    page = client.get("/annotate/", follow=True).content.decode()

    assert "Rating opens once the study team has approved your application." in page
    assert f"We will email you at {applicant.email} when it is decided" in page


def test_a_failed_quiz_can_be_retried_once(applicant, luffy, question_bank):
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    wrong = {pk: (choice + 1) % 4 for pk, choice in right_answers(qualification).items()}

    services.quiz_submit(user=applicant, character=luffy, choices=wrong)
    qualification.refresh_from_db()
    wrong = {pk: (choice + 1) % 4 for pk, choice in right_answers(qualification).items()}
    services.quiz_submit(user=applicant, character=luffy, choices=wrong)

    with pytest.raises(services.AnnotationError) as refusal:
        services.quiz_submit(user=applicant, character=luffy, choices=wrong)
    assert refusal.value.code == "no_attempts_left"
    qualification.refresh_from_db()
    assert qualification.status == QualificationStatus.FAILED and qualification.quiz_attempts == 2


def test_the_pass_mark_comes_from_the_studies(applicant, luffy, question_bank):
    Study.objects.update(screening_pass_mark=0.6)
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    answers = right_answers(qualification)
    choices = {pk: (c if i < 3 else (c + 1) % 4) for i, (pk, c) in enumerate(answers.items())}

    result = services.quiz_submit(user=applicant, character=luffy, choices=choices)

    assert result.quiz_score == pytest.approx(0.6)
    assert result.status == QualificationStatus.PASSED


def test_an_incomplete_quiz_is_refused_and_uses_no_attempt(applicant, luffy, question_bank):
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])

    with pytest.raises(services.AnnotationError):
        services.quiz_submit(user=applicant, character=luffy, choices={})

    assert Qualification.objects.get().quiz_attempts == 0


def test_a_quiz_refused_for_a_missing_answer_comes_back_as_it_was_filled_in(
    client, applicant, luffy, question_bank
):
    """Only a script or a browser without `required` sends a quiz with an answer left out:
    the answers chosen and the sample come back with the error, to finish the quiz."""
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    client.force_login(applicant)
    *answered, left_out = right_answers(qualification).items()
    form = {f"q{pk}": str(choice) for pk, choice in answered}
    form["roleplay_sample"] = "别灰心！"

    response = client.post(f"/screening/quiz/{luffy.pk}/", form)

    assert response.status_code == 422
    html = response.content.decode()
    assert "Please answer every question." in html
    for pk, choice in answered:
        assert f'name="q{pk}" value="{choice}" checked required' in html
    assert f'name="q{left_out[0]}" value="{left_out[1]}" required' in html
    assert html.count(" checked ") == len(answered)
    assert ">别灰心！</textarea>" in html
    assert '<form method="post" class="show-missing">' in html  # the one left out in red
    assert Qualification.objects.get().quiz_attempts == 0


def test_the_admin_action_approves_and_work_follows(client, applicant, luffy, question_bank):
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    services.quiz_submit(user=applicant, character=luffy, choices=right_answers(qualification))
    staff = UserFactory(email="manager@example.com", is_staff=True, is_superuser=True)
    request = RequestFactory().post("/admin/")
    request.user = staff
    request._messages = type("M", (), {"add": lambda *a, **k: None})()

    QualificationAdmin(Qualification, AdminSite()).approve(request, Qualification.objects.all())

    qualification.refresh_from_db()
    assert (
        qualification.status == QualificationStatus.APPROVED and qualification.reviewed_by == staff
    )
    assert annotator_step(applicant) == Step.READY
    client.force_login(applicant)
    assert client.get("/annotate/", follow=True).status_code == 200
    assert services.assignment_next(user=applicant).item.character == luffy


def test_a_rejected_applicant_gets_no_work(applicant, luffy, question_bank):
    services.consent_give(user=applicant)
    services.characters_claim(user=applicant, characters=[luffy])
    qualification = Qualification.objects.get()
    services.quiz_submit(user=applicant, character=luffy, choices=right_answers(qualification))

    services.qualification_review(qualification=qualification, reviewer=None, approve=False)

    assert annotator_step(applicant) == Step.REJECTED
    assert services.assignment_next(user=applicant) is None


def test_a_suspended_annotator_gets_no_work(client, alice):
    AnnotatorProfile.objects.filter(user=alice).update(status="suspended")
    client.force_login(alice)

    assert client.get("/annotate/")["Location"] == "/screening/"
    assert services.assignment_next(user=alice) is None


def test_the_demo_annotators_can_rate_at_once(demo_dataset):
    call_command("seed_demo", stdout=StringIO())

    annotator = get_user_model().objects.get(email="annotator1@example.com")

    assert annotator_step(annotator) == Step.READY
    lease = services.assignment_next(user=annotator)
    assert lease is not None and lease.item.study.slug == "demo-study"
    simulated = Study.objects.get(slug="demo-results-simulated")
    assert simulated.status == "closed" and simulated.results.judgments > 0


@pytest.mark.parametrize("consented", [False, True])
@pytest.mark.parametrize("profile_status", [s.value for s in ProfileStatus])
@pytest.mark.parametrize(
    "qualifications",
    [(), ("claimed",), ("approved",), ("rejected", "approved"), ("passed", "failed")],
)
def test_the_written_readiness_agrees_with_the_step(
    consented, profile_status, qualifications, luffy
):
    """The rating page asks whether an annotator may rate inside its read of the lease
    (`ready_condition`); it must say yes exactly when `annotator_step` says READY."""
    person = UserFactory(email="someone@example.com")
    profile = AnnotatorProfile.objects.create(
        user=person,
        status=profile_status,
        consented_at=timezone.now() if consented else None,
    )
    characters = [luffy, Character.objects.exclude(pk=luffy.pk).first()]
    for character, status in zip(characters, qualifications, strict=False):
        Qualification.objects.create(profile=profile, character=character, status=status)
    (ready,) = sql.one_row(f"SELECT {ready_condition('%s')}", [person.pk])

    assert bool(ready) == (annotator_step(person) == Step.READY)


def test_an_annotator_suspended_while_holding_a_lease_is_sent_to_screening(client, alice):
    lease = lease_pair(alice)
    AnnotatorProfile.objects.filter(user=alice).update(status="suspended")
    client.force_login(alice)

    page = client.get(f"/annotate/{lease.token}/")
    submission = client.post(f"/annotate/{lease.token}/", complete_form())

    assert page["Location"] == submission["Location"] == "/screening/"
    assert not Judgment.objects.exists()
