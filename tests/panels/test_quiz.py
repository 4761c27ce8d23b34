"""A participant's screening on a study with the character quiz, through the pages: the
characters with a quiz, one attempt at each one's quiz, the characters passed admitted at
once, and failing them all ending on the screen-out page with the paid code, once.
Refused posts change nothing."""

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import (
    AnnotatorProfile,
    Assignment,
    AuditAction,
    AuditEvent,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    ScreeningQuestion,
    StudyMembership,
)
from panels import services
from panels.models import Participant, ParticipantState
from tests.builders import make_panel_study, make_study
from tests.panels.test_batch import done_url, join, rate_one, start_url

pytestmark = pytest.mark.django_db

ITEMS = 3
SCREEN_OUT_LINK = "https://app.prolific.com/submissions/complete?cc=SCREENED"


@pytest.fixture
def panel(demo_dataset, luffy, natsume):
    return make_panel_study(
        make_study(characters=[luffy, natsume]), items_per_participant=ITEMS, quiz=True
    )


def answers(participant, character, *, right: bool) -> dict[str, str]:
    """The quiz's post for `character`, every answer right or every one wrong."""
    qualification = Qualification.objects.get(profile__user=participant.user, character=character)
    return {
        f"q{question.pk}": str(
            question.correct_choice
            if right
            else (question.correct_choice + 1) % len(question.choices)
        )
        for question in annotation_services.quiz_questions(qualification=qualification)
    }


def quiz_post(participant, character, *, right: bool) -> dict[str, object]:
    return {
        "step": "quiz",
        "character": character.pk,
        **answers(participant, character, right=right),
    }


def chose(client, panel, *characters) -> Participant:
    """A participant through the link, consent and the choice of `characters`."""
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    response = client.post(
        start_url(panel), {"step": "characters", "characters": [c.pk for c in characters]}
    )
    assert response.status_code == 302, response.content.decode()
    return Participant.objects.get(panel_study=panel)


def screened(participant) -> dict:
    """What a refused post must leave as it was."""
    participant.refresh_from_db()
    return {
        "participant": (participant.state, participant.code),
        "qualifications": sorted(
            Qualification.objects.filter(profile__user=participant.user).values_list(
                "character_id", "status", "quiz_attempts"
            )
        ),
        "memberships": StudyMembership.objects.count(),
        "audit": AuditEvent.objects.count(),
    }


def test_the_quiz_path_admits_only_the_character_passed(client, panel, luffy, natsume):
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    page = client.get(start_url(panel)).content.decode()
    assert f'value="{luffy.pk}"' in page and f'value="{natsume.pk}"' in page
    participant = chose(client, panel, luffy, natsume)

    first = client.get(start_url(panel))
    assert first.status_code == 200 and b'data-testid="panel-quiz"' in first.content
    assert f'name="character" value="{luffy.pk}"' in first.content.decode()
    response = client.post(start_url(panel), quiz_post(participant, luffy, right=True))
    assert response.status_code == 302
    assert not StudyMembership.objects.exists(), "admitted only after the last quiz"
    second = client.get(start_url(panel)).content.decode()
    assert f'name="character" value="{natsume.pk}"' in second
    assert luffy.name_zh in second, "the first quiz's outcome is shown"
    response = client.post(start_url(panel), quiz_post(participant, natsume, right=False))
    assert response.status_code == 302

    ready = client.get(start_url(panel))
    assert ready.status_code == 200
    assert b'data-testid="panel-instructions"' in ready.content
    assert reverse("annotate").encode() in ready.content
    assert luffy.name_zh in ready.content.decode().split('data-testid="panel-rated-characters"')[1]
    profile = AnnotatorProfile.objects.get(user=participant.user)
    assert profile.status == ProfileStatus.APPROVED and profile.members_only
    assert dict(profile.qualifications.values_list("character_id", "status")) == {
        luffy.pk: QualificationStatus.APPROVED,
        natsume.pk: QualificationStatus.REJECTED,
    }
    membership = StudyMembership.objects.get(annotator=participant.user)
    assert membership.study == panel.study and membership.cap == ITEMS
    assert list(membership.characters.values_list("pk", flat=True)) == [luffy.pk]

    for _ in range(ITEMS):
        assert rate_one(client) == panel.study.slug
    judged = Judgment.objects.filter(annotator=participant.user)
    assert judged.count() == ITEMS
    assert set(judged.values_list("item__character_id", flat=True)) == {luffy.pk}
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    done = client.get(done_url(panel)).content.decode()
    assert "C1A2B3" in done and "SCREENED" not in done
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.COMPLETED, "C1A2B3")


def test_only_the_studys_characters_with_a_quiz_are_offered(client, panel, luffy, natsume):
    ScreeningQuestion.objects.filter(character=natsume).update(active=False)
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    page = client.get(start_url(panel)).content.decode()
    assert f'value="{luffy.pk}"' in page and f'value="{natsume.pk}"' not in page
    refused = client.post(start_url(panel), {"step": "characters", "characters": [natsume.pk]})
    assert refused.status_code == 422 and "Characters" in refused.content.decode()
    assert not Qualification.objects.exists()


def test_a_quiz_study_without_any_quiz_says_so_instead_of_offering_nothing(
    client, panel, luffy, natsume
):
    ScreeningQuestion.objects.update(active=False)
    join(client, panel)
    client.post(start_url(panel), {"step": "consent", "agree": "yes"})
    page = client.get(start_url(panel)).content.decode()
    assert 'data-testid="panel-no-quiz"' in page
    assert f'value="{luffy.pk}"' not in page


def test_failing_every_quiz_ends_with_the_screen_out_code_and_link(client, panel, luffy, natsume):
    participant = chose(client, panel, luffy, natsume)
    client.post(start_url(panel), quiz_post(participant, luffy, right=False))
    assert Participant.objects.get().state == ParticipantState.STARTED, "a quiz is still to come"
    client.post(start_url(panel), quiz_post(participant, natsume, right=False))

    assert client.get(start_url(panel))["Location"] == done_url(panel)
    page = client.get(done_url(panel))
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-testid="panel-screened-out"' in body and "did not pass the quiz" in body
    assert body.count("SCREENED") == 2, "the code, and the link that carries it"
    assert SCREEN_OUT_LINK in body and "C1A2B3" not in body
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.SCREENED_OUT, "SCREENED")
    assert participant.finished_at is not None
    assert services.completion_link(participant) == SCREEN_OUT_LINK
    outcome = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert outcome.actor is None and outcome.study == panel.study
    assert (outcome.before, outcome.after) == (
        {"state": "started"},
        {"state": "screened_out"},
    )
    assert "quiz" in outcome.note
    assert outcome.target_label == participant.user.annotator_profile.pseudonym
    assert not StudyMembership.objects.exists()
    assert set(
        Qualification.objects.filter(profile__user=participant.user).values_list(
            "status", flat=True
        )
    ) == {QualificationStatus.REJECTED}


def test_coming_back_after_a_screen_out_gives_no_second_code_or_batch(client, panel, luffy):
    participant = chose(client, panel, luffy)
    client.post(start_url(panel), quiz_post(participant, luffy, right=False))
    client.get(done_url(panel))
    before = screened(participant)

    assert join(client, panel)["Location"] == start_url(panel)
    assert client.get(start_url(panel))["Location"] == done_url(panel)
    assert client.get(reverse("annotate"))["Location"] == done_url(panel)
    assert client.post(start_url(panel), quiz_post(participant, luffy, right=True)).status_code == (
        302
    )
    again = client.get(done_url(panel)).content.decode()
    assert "SCREENED" in again and 'data-testid="panel-screened-out"' in again
    with pytest.raises(services.PanelError):
        services.participant_quiz_submit(participant=participant, character=luffy, choices={})
    with pytest.raises(services.PanelError):
        services.participant_complete(participant=participant)
    assert services.participant_screening_settle(participant=participant).code == "SCREENED"
    assert services.participant_run_out(participant=participant).code == "SCREENED"
    assert screened(participant) == before
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1
    assert not Assignment.objects.filter(annotator=participant.user).exists()
    assert Participant.objects.count() == 1


@pytest.mark.parametrize("wrong", ["missing answers", "a foreign character", "a second attempt"])
def test_a_refused_quiz_post_changes_nothing(client, panel, luffy, natsume, wrong):
    participant = chose(client, panel, luffy, natsume)
    if wrong == "missing answers":
        post = quiz_post(participant, luffy, right=True)
        del post[next(key for key in post if key.startswith("q"))]
        expected = "Quiz: please answer every question."
    elif wrong == "a foreign character":
        other = make_study()
        stranger = next(c for c in other.characters.all() if c.pk not in (luffy.pk, natsume.pk))
        post = {**quiz_post(participant, luffy, right=True), "character": stranger.pk}
        expected = "Take the quizzes of the characters you chose only."
    else:
        client.post(start_url(panel), quiz_post(participant, luffy, right=False))
        post = {**quiz_post(participant, natsume, right=True), "character": luffy.pk}
        expected = "there is one attempt per character"
    before = screened(participant)

    response = client.post(start_url(panel), post)

    assert response.status_code == 422
    assert expected in response.content.decode()
    assert screened(participant) == before


def test_the_quiz_service_refuses_what_the_pages_refuse(panel, luffy, natsume):
    from tests.builders import panel_participant

    participant = panel_participant(panel)
    with pytest.raises(services.PanelError) as refused:
        services.participant_characters_choose(participant=participant, characters=[luffy])
    assert refused.value.code == "no_consent"
    services.participant_consent(participant=participant)
    with pytest.raises(services.PanelError) as refused:
        services.participant_admit(participant=participant, characters=[luffy])
    assert refused.value.code == "quiz"
    services.participant_characters_choose(participant=participant, characters=[luffy])
    before = screened(participant)
    for choices, code in (({}, "incomplete_quiz"),):
        with pytest.raises(services.PanelError) as refused:
            services.participant_quiz_submit(
                participant=participant, character=luffy, choices=choices
            )
        assert refused.value.code == code
    with pytest.raises(services.PanelError) as refused:
        services.participant_quiz_submit(participant=participant, character=natsume, choices={})
    assert refused.value.code == "not_chosen"
    with pytest.raises(services.PanelError) as refused:
        services.participant_characters_choose(participant=participant, characters=[natsume])
    assert refused.value.code == "already_chosen"
    assert screened(participant) == before


def test_a_second_attempt_on_the_annotators_quiz_page_does_not_admit(client, panel, luffy):
    """The site's own quiz page allows two attempts; a participant's quiz not passed is
    final there too."""
    participant = chose(client, panel, luffy)
    client.post(start_url(panel), quiz_post(participant, luffy, right=False))
    post = answers(participant, luffy, right=True)
    response = client.post(reverse("screening-quiz", args=[luffy.pk]), post)
    assert response.status_code in (302, 422)
    qualification = Qualification.objects.get(profile__user=participant.user)
    assert (qualification.status, qualification.quiz_attempts) == (
        QualificationStatus.REJECTED,
        1,
    )
    participant.refresh_from_db()
    assert participant.state == ParticipantState.SCREENED_OUT


def test_a_pass_at_a_second_attempt_on_the_annotators_quiz_page_is_no_pass(client, panel, luffy):
    """Taken on the site's own quiz page instead (fail, then pass): only a first attempt
    counts, so the start page settles it as a screen-out."""
    participant = chose(client, panel, luffy)
    quiz = reverse("screening-quiz", args=[luffy.pk])
    client.post(quiz, answers(participant, luffy, right=False))
    client.post(quiz, answers(participant, luffy, right=True))
    assert Qualification.objects.get(profile__user=participant.user).quiz_attempts == 2

    assert client.get(start_url(panel))["Location"] == done_url(panel)

    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.SCREENED_OUT, "SCREENED")
    assert not StudyMembership.objects.exists()


def test_the_quiz_and_the_screen_out_page_read_in_chinese(client, panel, luffy, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    participant = chose(client, panel, luffy)
    quiz = client.get(start_url(panel)).content.decode()
    assert f"测验：{luffy.name_zh}" in quiz and "提交答案" in quiz
    refused = client.post(start_url(panel), {"step": "quiz", "character": luffy.pk})
    assert "测验：请回答所有题目。" in refused.content.decode()
    client.post(start_url(panel), quiz_post(participant, luffy, right=False))
    page = client.get(done_url(panel)).content.decode()
    assert "你没有通过所选任何角色的测验" in page
    assert "你的完成码是 <strong>SCREENED</strong>" in page
    assert "did not pass" not in page
