"""A quiz for every character: the bundled question bank, its loader, quiz-less characters,
what a quiz result tells the applicant, and staff editing questions in the admin."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation import services
from annotation.models import Qualification, QualificationStatus, ScreeningQuestion
from dialogues.models import Character
from tests.builders import UserFactory

pytestmark = pytest.mark.django_db

# The twenty characters of the published ChatAnime data.
PUBLISHED_CHARACTERS = {
    "《海贼王》的蒙奇·D·路飞",
    "《火影忍者》的漩涡鸣人",
    "《银魂》的坂田银时",
    "《夏目友人帐》的夏目贵志",
    "《刀剑神域》的桐谷和人",
    "《冰菓》的折木奉太郎",
    "《进击的巨人》的利威尔·阿克曼",
    "《排球少年！！》的日向翔阳",
    "《文豪野犬》的中原中也",
    "《咒术回战》的五条悟",
    "《龙与虎》的逢坂大河",
    "《某科学的超电磁炮》的御坂美琴",
    "《命运石之门》的牧濑红莉栖",
    "《Fate Zero》的Saber（阿尔托莉雅·潘德拉贡）",
    "《魔法少女小圆》的鹿目圆",
    "《我的妹妹哪有这么可爱！》的五更琉璃",
    "《刀剑神域》的结城明日奈（亚丝娜）",
    "《路人女主的养成方法》的加藤惠",
    "《Re：从零开始的异世界生活》的蕾姆",
    "《紫罗兰永恒花园》的薇尔莉特·伊芙加登",
}


def load(*args):
    out, err = StringIO(), StringIO()
    call_command("load_screening_questions", *args, stdout=out, stderr=err)
    return out.getvalue()


@pytest.fixture
def gojo(db):
    return Character.objects.create(
        key="《咒术回战》的五条悟", work_zh="咒术回战", name_zh="五条悟", name_en="Satoru Gojo"
    )


@pytest.fixture
def unknown_character(db):
    """A character of some other data set, for which no quiz exists."""
    return Character.objects.create(key="《原创故事》的小林", work_zh="原创故事", name_zh="小林")


@pytest.fixture
def applicant(db):
    user = UserFactory(email="fan@example.com")
    services.consent_give(user=user)
    return user


def write_quiz_file(tmp_path, characters):
    path = tmp_path / "quizzes.json"
    path.write_text(json.dumps({"characters": characters}, ensure_ascii=False), encoding="utf-8")
    return path


def good_question(prompt="五条悟是哪所学校的老师？"):
    return {
        "prompt_zh": prompt,
        "prompt_en": "Where does Gojo teach?",
        "choices": [
            {"zh": "东京咒术高专", "en": "Tokyo Jujutsu High"},
            {"zh": "雄英", "en": "U.A."},
        ],
        "correct_choice": 0,
    }


# The bundled bank ---------------------------------------------------------------------


def test_the_bundled_bank_has_a_bilingual_quiz_for_every_published_character():
    bank = services.quiz_file_read(services.BUNDLED_QUIZZES)

    assert set(bank) == PUBLISHED_CHARACTERS
    for key, questions in bank.items():
        # A larger pool than one attempt, so that a retry can ask other questions.
        assert services.QUIZ_LENGTH < len(questions) <= 10, key
        for question in questions:
            assert question["prompt_zh"] and question["prompt_en"]
            assert all(choice["zh"] and choice["en"] for choice in question["choices"])


def test_every_bundled_question_names_the_public_pages_it_was_checked_against():
    bank = services.quiz_file_read(services.BUNDLED_QUIZZES)

    for key, questions in bank.items():
        for question in questions:
            assert question["sources"], (key, question["prompt_en"])
            assert all(url.startswith(("https://", "http://")) for url in question["sources"])


def test_the_bundled_bank_has_ruri_gokous_favourite_anime_right():
    # Checked against the Oreimo wiki: the show is "MASCHERA ~堕天した獣の慟哭~", not a
    # "fallen black cat"; a wrong title here would reject the fans who know it.
    bank = services.quiz_file_read(services.BUNDLED_QUIZZES)
    question = next(
        q for q in bank["《我的妹妹哪有这么可爱！》的五更琉璃"] if "Meruru" in q["prompt_en"]
    )

    answer = question["choices"][question["correct_choice"]]

    assert answer == {
        "zh": "《MASCHERA～堕天之兽的恸哭～》",
        "en": "Maschera: Lament of a Fallen Beast",
    }


def test_loading_a_file_with_sources_keeps_the_question_as_written(tmp_path, gojo):
    source = "https://jujutsu-kaisen.fandom.com/wiki/Satoru_Gojo"
    path = write_quiz_file(
        tmp_path, {"《咒术回战》的五条悟": [{**good_question(), "sources": [source]}]}
    )

    load(str(path))

    question = ScreeningQuestion.objects.get(character=gojo)
    assert question.prompt_en == "Where does Gojo teach?"
    assert question.choices[question.correct_choice]["en"] == "Tokyo Jujutsu High"


def test_loading_adds_the_questions_of_the_characters_in_the_database(gojo):
    output = load()

    questions = ScreeningQuestion.objects.filter(character=gojo)
    assert questions.count() == 8
    assert "8 created" in output
    assert "19 character(s) of the file are not imported yet" in output
    assert {len(q.choices) for q in questions} == {4}


def test_loading_twice_changes_nothing(gojo):
    load()
    before = list(ScreeningQuestion.objects.values_list("pk", "prompt_zh", "choices"))

    output = load()

    assert list(ScreeningQuestion.objects.values_list("pk", "prompt_zh", "choices")) == before
    assert "0 created, 8 already there" in output


def test_loading_again_keeps_what_staff_edited(gojo):
    load()
    edited = ScreeningQuestion.objects.filter(character=gojo).first()
    edited.prompt_en = "Edited by staff"
    edited.active = False
    edited.save()

    load()

    edited.refresh_from_db()
    assert edited.prompt_en == "Edited by staff" and not edited.active
    assert ScreeningQuestion.objects.filter(character=gojo).count() == 8


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "invalid JSON at line 1"),
        ("{}".encode("utf-16"), "not UTF-8"),
        (json.dumps({"characters": []}).encode(), "non-empty 'characters' object"),
        (
            json.dumps(
                {
                    "characters": {
                        "《咒术回战》的五条悟": [
                            good_question(),
                            {**good_question("另一题"), "correct_choice": 4},
                        ]
                    }
                },
                ensure_ascii=False,
            ).encode(),
            "《咒术回战》的五条悟: question 2: correct_choice must be a whole number from 0 to 1",
        ),
        (
            json.dumps(
                {"characters": {"《咒术回战》的五条悟": [{**good_question(), "prompt_en": ""}]}},
                ensure_ascii=False,
            ).encode(),
            "《咒术回战》的五条悟: question 1: prompt_en must be non-empty text",
        ),
        (
            json.dumps(
                {"characters": {"《咒术回战》的五条悟": [good_question(), good_question()]}},
                ensure_ascii=False,
            ).encode(),
            "question 2: the same prompt_zh appears twice",
        ),
        (
            json.dumps(
                {
                    "characters": {
                        "《咒术回战》的五条悟": [
                            {**good_question(), "choices": [{"zh": "只有一个", "en": "Only one"}]}
                        ]
                    }
                },
                ensure_ascii=False,
            ).encode(),
            "question 1: choices must be a list of 2 to 6 choices",
        ),
        (
            json.dumps(
                {
                    "characters": {
                        "《咒术回战》的五条悟": [{**good_question(), "sources": "fandom"}]
                    }
                },
                ensure_ascii=False,
            ).encode(),
            "question 1: sources must be a non-empty list of http(s) addresses",
        ),
    ],
)
def test_a_bad_file_is_refused_with_a_clear_error_and_changes_nothing(
    tmp_path, gojo, content, expected
):
    # A file that is good for one character but bad for another writes nothing at all.
    path = tmp_path / "quizzes.json"
    path.write_bytes(content)
    err = StringIO()

    with pytest.raises(CommandError, match="nothing was written"):
        call_command("load_screening_questions", str(path), stdout=StringIO(), stderr=err)

    assert expected in err.getvalue()
    assert not ScreeningQuestion.objects.exists()


def test_one_bad_question_stops_the_good_ones_too(tmp_path, gojo, unknown_character):
    path = write_quiz_file(
        tmp_path,
        {
            "《原创故事》的小林": [good_question("小林是谁？")],
            "《咒术回战》的五条悟": [{**good_question(), "choices": "A, B"}],
        },
    )

    with pytest.raises(CommandError):
        call_command("load_screening_questions", str(path), stdout=StringIO(), stderr=StringIO())

    assert not ScreeningQuestion.objects.exists()


def test_a_missing_file_is_named(tmp_path):
    err = StringIO()

    with pytest.raises(CommandError):
        call_command(
            "load_screening_questions", str(tmp_path / "nope.json"), stdout=StringIO(), stderr=err
        )

    assert "nope.json: cannot be read" in err.getvalue()


# Choosing characters -------------------------------------------------------------------


def test_characters_without_a_quiz_are_shown_disabled_with_the_reason(
    client, applicant, gojo, unknown_character
):
    load()
    client.force_login(applicant)

    html = client.get("/screening/characters/").content.decode()

    assert f'value="{gojo.pk}"' in html and f'value="{gojo.pk}" disabled' not in html
    assert f'value="{unknown_character.pk}" disabled' in html
    assert f'data-testid="no-quiz-{unknown_character.pk}"' in html
    assert "No quiz for this character yet, so it cannot be chosen." in html
    assert f'data-testid="no-quiz-{gojo.pk}"' not in html


def test_a_character_without_a_quiz_cannot_be_claimed_and_nothing_changes(
    client, applicant, gojo, unknown_character
):
    load()
    client.force_login(applicant)

    response = client.post("/screening/characters/", {"character": [gojo.pk, unknown_character.pk]})

    assert response.status_code == 422
    assert "has no quiz yet" in response.content.decode()
    assert not Qualification.objects.exists()


def test_a_character_whose_questions_are_all_inactive_has_no_quiz(client, applicant, gojo):
    load()
    ScreeningQuestion.objects.update(active=False)

    with pytest.raises(services.AnnotationError) as refusal:
        services.characters_claim(user=applicant, characters=[gojo])

    assert refusal.value.code == "no_quiz"


# Quiz results --------------------------------------------------------------------------


@pytest.fixture
def gojo_applicant(applicant, gojo):
    load()
    services.characters_claim(user=applicant, characters=[gojo])
    return applicant


def answers_to_current_attempt(user, gojo, right: bool) -> dict[str, str]:
    qualification = Qualification.objects.get(profile__user=user, character=gojo)
    return {
        f"q{q.pk}": str(q.correct_choice if right else (q.correct_choice + 1) % len(q.choices))
        for q in services.quiz_questions(qualification=qualification)
    }


def test_a_failed_quiz_names_the_score_the_pass_mark_and_the_attempts_left(
    client, gojo_applicant, gojo
):
    client.force_login(gojo_applicant)

    page = client.post(
        f"/screening/quiz/{gojo.pk}/",
        answers_to_current_attempt(gojo_applicant, gojo, right=False),
        follow=True,
    ).content.decode()

    assert "Not passed this time: you scored 0%; the pass mark is 80%." in page
    assert "You have 1 attempt left, with different questions where possible." in page
    assert "Try again" in page


def test_the_last_failed_attempt_says_that_none_are_left(client, gojo_applicant, gojo):
    client.force_login(gojo_applicant)
    for _ in range(2):
        page = client.post(
            f"/screening/quiz/{gojo.pk}/",
            answers_to_current_attempt(gojo_applicant, gojo, right=False),
            follow=True,
        ).content.decode()

    assert "No attempts are left for this character." in page
    assert "No attempts left" in page
    assert f"/screening/quiz/{gojo.pk}/" not in page


def test_a_quiz_with_no_attempt_left_is_not_shown(client, gojo_applicant, gojo):
    client.force_login(gojo_applicant)
    for _ in range(2):
        client.post(
            f"/screening/quiz/{gojo.pk}/",
            answers_to_current_attempt(gojo_applicant, gojo, right=False),
        )

    response = client.get(f"/screening/quiz/{gojo.pk}/", follow=True)

    assert response.redirect_chain[-1][0] == "/screening/"
    page = response.content.decode()
    assert "No quiz attempts are left for this character." in page
    assert 'name="roleplay_sample"' not in page


def test_a_passed_quiz_names_the_score_and_the_pass_mark(client, gojo_applicant, gojo):
    client.force_login(gojo_applicant)

    page = client.post(
        f"/screening/quiz/{gojo.pk}/",
        answers_to_current_attempt(gojo_applicant, gojo, right=True),
        follow=True,
    ).content.decode()

    assert "Quiz passed: you scored 100%; the pass mark is 80%." in page
    assert Qualification.objects.get().status == QualificationStatus.PASSED


def test_the_quiz_page_says_what_it_takes_to_pass(client, gojo_applicant, gojo):
    client.force_login(gojo_applicant)

    page = client.get(f"/screening/quiz/{gojo.pk}/").content.decode()

    assert "You pass with 80% of the answers right." in page
    assert page.count('class="quiz-question"') == services.QUIZ_LENGTH


def test_a_retry_asks_the_questions_not_seen_yet_first(gojo_applicant, gojo):
    qualification = Qualification.objects.get()
    first = {q.pk for q in services.quiz_questions(qualification=qualification)}
    wrong = {
        int(k[1:]): int(v)
        for k, v in answers_to_current_attempt(gojo_applicant, gojo, False).items()
    }
    services.quiz_submit(user=gojo_applicant, character=gojo, choices=wrong)

    qualification.refresh_from_db()
    second = {q.pk for q in services.quiz_questions(qualification=qualification)}

    pool = set(ScreeningQuestion.objects.filter(character=gojo).values_list("pk", flat=True))
    assert len(first) == len(second) == services.QUIZ_LENGTH
    # All three questions left unseen by the first attempt come first in the second.
    assert pool - first <= second


def test_the_same_attempt_keeps_its_questions_on_reload(gojo_applicant):
    qualification = Qualification.objects.get()

    assert services.quiz_questions(qualification=qualification) == services.quiz_questions(
        qualification=qualification
    )


# Staff edit questions in the admin ---------------------------------------------------


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(email="admin@example.com", is_staff=True, is_superuser=True))
    return client


def question_form(gojo, **overrides):
    form = {
        "character": gojo.pk,
        "prompt_zh": "五条悟的术式叫什么？",
        "prompt_en": "What is Gojo's technique?",
        "active": "on",
        "correct_choice": "1",
        "choice_0_zh": "十种影法术",
        "choice_0_en": "Ten Shadows",
        "choice_1_zh": "无下限咒术",
        "choice_1_en": "Limitless",
        "choice_2_zh": "咒灵操术",
        "choice_2_en": "Cursed Spirit Manipulation",
    }
    form.update(overrides)
    return form


def test_staff_add_a_question_with_one_field_per_choice(admin_client, gojo):
    response = admin_client.post("/admin/annotation/screeningquestion/add/", question_form(gojo))

    assert response.status_code == 302, response.content.decode()[:2000]
    question = ScreeningQuestion.objects.get()
    assert question.choices == [
        {"zh": "十种影法术", "en": "Ten Shadows"},
        {"zh": "无下限咒术", "en": "Limitless"},
        {"zh": "咒灵操术", "en": "Cursed Spirit Manipulation"},
    ]
    assert question.correct_choice == 1


def test_staff_edit_a_loaded_question_and_see_its_choices(admin_client, gojo):
    load()
    question = ScreeningQuestion.objects.filter(character=gojo).first()

    page = admin_client.get(f"/admin/annotation/screeningquestion/{question.pk}/change/")
    html = page.content.decode()
    assert question.choices[0]["zh"] in html and question.choices[3]["en"] in html

    form = question_form(gojo, prompt_zh=question.prompt_zh, choice_1_en="Limitless (edited)")
    admin_client.post(f"/admin/annotation/screeningquestion/{question.pk}/change/", form)
    question.refresh_from_db()
    assert question.choices[1]["en"] == "Limitless (edited)" and len(question.choices) == 3


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"correct_choice": "4"}, "The right choice must be one of the filled ones."),
        ({"choice_1_zh": "", "choice_1_en": ""}, "Fill the choices in order, without gaps."),
        (
            {"choice_2_zh": "", "choice_2_en": "", "choice_1_zh": "", "choice_1_en": ""},
            "at least two choices",
        ),
        ({"choice_2_zh": ""}, "A choice needs its Chinese text."),
    ],
)
def test_a_bad_question_form_is_refused_and_saves_nothing(admin_client, gojo, overrides, error):
    response = admin_client.post(
        "/admin/annotation/screeningquestion/add/", question_form(gojo, **overrides)
    )

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not ScreeningQuestion.objects.exists()


def test_the_question_list_filters_by_character(admin_client, gojo):
    load()

    page = admin_client.get(f"/admin/annotation/screeningquestion/?character__id__exact={gojo.pk}")

    assert page.status_code == 200
    assert page.content.decode().count('class="field-prompt_zh"') == 8
