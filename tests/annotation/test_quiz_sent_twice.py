"""A quiz sent twice (a double click on a slow connection, a second tab left open): the
first sending is scored, the second is told so and spends no attempt, whatever the size
of the character's question bank."""

import json

import pytest
from django.core.management import call_command

from annotation import services
from annotation.models import Qualification, QualificationStatus
from dialogues.models import Character
from tests.builders import UserFactory

pytestmark = pytest.mark.django_db


def five_question_bank(tmp_path):
    """Staff's own bank with exactly one attempt's worth of questions: a retry asks the
    same five again."""
    questions = [
        {
            "prompt_zh": f"第{n}题：五条悟是哪所学校的老师？",
            "prompt_en": f"Question {n}: where does Gojo teach?",
            "choices": [
                {"zh": "东京咒术高专", "en": "Tokyo Jujutsu High"},
                {"zh": "雄英", "en": "U.A."},
            ],
            "correct_choice": 0,
        }
        for n in range(1, 6)
    ]
    path = tmp_path / "quizzes.json"
    path.write_text(
        json.dumps({"characters": {"《咒术回战》的五条悟": questions}}, ensure_ascii=False),
        encoding="utf-8",
    )
    call_command("load_screening_questions", str(path), stdout=None)


@pytest.fixture(params=["bundled bank", "five questions"])
def gojo_applicant(request, db, tmp_path):
    gojo = Character.objects.create(
        key="《咒术回战》的五条悟", work_zh="咒术回战", name_zh="五条悟", name_en="Satoru Gojo"
    )
    if request.param == "five questions":
        five_question_bank(tmp_path)
    else:
        call_command("load_screening_questions", stdout=None)
    user = UserFactory(email="fan@example.com")
    services.consent_give(user=user)
    services.characters_claim(user=user, characters=[gojo])
    return user, gojo


def wrong_answers_as_shown(client, gojo) -> dict[str, str]:
    """The quiz form as the page shows it, every answer wrong."""
    page = client.get(f"/screening/quiz/{gojo.pk}/").content.decode()
    qualification = Qualification.objects.get(character=gojo)
    form = {
        f"q{q.pk}": str((q.correct_choice + 1) % len(q.choices))
        for q in services.quiz_questions(qualification=qualification)
    }
    assert 'name="attempt" value="0"' in page
    form["attempt"] = "0"
    return form


def test_the_same_failed_quiz_sent_twice_spends_one_attempt(client, gojo_applicant):
    user, gojo = gojo_applicant
    client.force_login(user)
    form = wrong_answers_as_shown(client, gojo)

    first = client.post(f"/screening/quiz/{gojo.pk}/", form)
    second = client.post(f"/screening/quiz/{gojo.pk}/", form, follow=True)

    assert first.status_code == 302
    assert second.redirect_chain == [("/screening/", 302)]
    page = second.content.decode()
    assert "These answers were already sent and scored; your result is below." in page
    assert "Please answer every question" not in page
    qualification = Qualification.objects.get(character=gojo)
    assert qualification.quiz_attempts == 1
    assert qualification.status == QualificationStatus.FAILED
    assert f"/screening/quiz/{gojo.pk}/" in page  # the second attempt is still there


def test_answers_for_an_attempt_not_made_yet_are_refused_too(gojo_applicant):
    user, gojo = gojo_applicant

    with pytest.raises(services.AnnotationError) as refusal:
        services.quiz_submit(user=user, character=gojo, choices={}, attempt=3)

    assert refusal.value.code == "quiz_already_sent"
    assert Qualification.objects.get(character=gojo).quiz_attempts == 0


def test_a_passing_quiz_sent_twice_at_once_is_told_it_was_scored_not_already_passed(
    gojo_applicant,
):
    """Both sendings passed the page's own checks before the first was scored (two
    requests at once): the second, scored after the first passed, goes to the result."""
    user, gojo = gojo_applicant
    qualification = Qualification.objects.get(character=gojo)
    right = {q.pk: q.correct_choice for q in services.quiz_questions(qualification=qualification)}
    services.quiz_submit(user=user, character=gojo, choices=right, attempt=0)

    with pytest.raises(services.AnnotationError) as refusal:
        services.quiz_submit(user=user, character=gojo, choices=right, attempt=0)

    assert refusal.value.code == "quiz_already_sent"
    assert Qualification.objects.get(character=gojo).quiz_attempts == 1
