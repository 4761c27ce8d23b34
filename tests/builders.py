"""Builders of the people and things tests need, made through the services as users and
staff would make them: one place for every app's tests (annotators, writers, staff roles,
studies, writing runs). Fixtures that hand them to tests live in tests/fixtures/."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation import services
from annotation.models import (
    AnswerExposure,
    Item,
    ItemKind,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
)
from annotation.models.studies import PairingDesign
from common.roles import RESEARCHERS_GROUP, STUDY_MANAGERS_GROUP
from dialogues.models import Answer, Character, Scenario, Source, SourceKind, persona_group_for
from panels import services as panel_services
from writing import services as writing_services


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["email"]

    email = factory.Sequence(lambda n: f"person{n}@example.com")
    username = factory.LazyAttribute(lambda user: user.email.split("@")[0])
    password = factory.django.Password("pw-for-tests")


class SourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Source
        django_get_or_create = ["slug"]

    slug = factory.Sequence(lambda n: f"model-{n}")
    kind = SourceKind.LLM
    display_name = factory.LazyAttribute(lambda source: source.slug)


class CharacterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Character
        django_get_or_create = ["key"]

    work_zh = "海贼王"
    name_zh = factory.Sequence(lambda n: f"角色{n}")
    key = factory.LazyAttribute(lambda c: f"《{c.work_zh}》的{c.name_zh}")


class ScenarioFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Scenario
        django_get_or_create = ["number"]

    number = factory.Sequence(lambda n: n % 60 + 1)
    question = factory.LazyAttribute(lambda s: f"场景{s.number}的问题")
    persona_group = factory.LazyAttribute(lambda s: persona_group_for(s.number))


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Answer

    character = factory.SubFactory(CharacterFactory)
    scenario = factory.SubFactory(ScenarioFactory)
    source = factory.SubFactory(SourceFactory)
    round = 1
    question = factory.LazyAttribute(lambda a: a.scenario.question)
    text = factory.Sequence(lambda n: f"回答{n}")


def approved_annotator(email: str, characters) -> "get_user_model()":
    """An annotator who consented, passed the quizzes and was approved for `characters`."""
    user = UserFactory(email=email)
    profile = services.consent_give(user=user)
    for character in characters:
        Qualification.objects.update_or_create(
            profile=profile, character=character, defaults={"status": QualificationStatus.APPROVED}
        )
    profile.status = ProfileStatus.APPROVED
    profile.save()
    return user


def lease_pair(user):
    """The annotator's next lease on a pair item, skipping diversity sets on the way."""
    from annotation.models import ItemKind

    lease = services.assignment_next(user=user)
    while lease.item.kind != ItemKind.PAIR:
        services.assignment_skip(user=user, token=lease.token, reason="pairs only")
        lease = services.assignment_next(user=user)
    return lease


# People by role -------------------------------------------------------------------------


def in_group(email: str, group: str, **fields):
    """An account in a staff group (`common.roles`)."""
    user = UserFactory(email=email, **fields)
    user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def study_manager_named(email: str, **fields):
    """A member of the study managers group (the staff pages and results)."""
    return in_group(email, STUDY_MANAGERS_GROUP, **fields)


def researcher_named(email: str, **fields):
    """A member of the researchers group (results, exports and the API)."""
    return in_group(email, RESEARCHERS_GROUP, **fields)


def applicant_who_passed(email, characters, sample="没事的！"):
    """Consented, claimed `characters` and passed each quiz."""
    user = UserFactory(email=email)
    services.consent_give(user=user)
    services.characters_claim(user=user, characters=characters)
    for character in characters:
        qualification = Qualification.objects.get(profile__user=user, character=character)
        right = {
            q.pk: q.correct_choice for q in services.quiz_questions(qualification=qualification)
        }
        services.quiz_submit(user=user, character=character, choices=right, roleplay_sample=sample)
    return user


# Studies ---------------------------------------------------------------------------------


def make_study(
    *,
    overlap=3,
    ask_human_guess=False,
    include_diversity=False,
    rounds=(1, 2),
    characters=None,
    design=PairingDesign.REFERENCE,
) -> Study:
    study = services.study_create(
        design=design,
        name="Test study",
        reference=Source.objects.get(kind=SourceKind.HUMAN),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=characters or list(Character.objects.all()),
        rounds=rounds,
        overlap=overlap,
        include_diversity=include_diversity,
        ask_human_guess=ask_human_guess,
    )
    services.study_open(study=study)
    return study


def late_scenario(luffy):
    """A one-character study whose work is all done but for one scenario, where two pairs
    want one judgment each. Bob has seen the compared answer of the second (a diversity
    set showed it to him), so the first is the only one he can take."""
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    pairs = study.items.filter(kind=ItemKind.PAIR).order_by("scenario__number", "pk")
    last_scenario = pairs.last().scenario
    Item.objects.filter(study=study).exclude(scenario=last_scenario).update(judgment_count=1)
    done, only_for_bob, open_to_all = pairs.filter(scenario=last_scenario)
    Item.objects.filter(pk=done.pk).update(judgment_count=1)
    # Counts made here rather than by submissions: the study's progress is counted too.
    services.character_progress_recount(study=study)
    bob = approved_annotator("bob-late@example.com", [luffy])
    AnswerExposure.objects.create(
        annotator=bob, study=study, answer=open_to_all.slots.get(slot=1).answer
    )
    return study, bob, only_for_bob, open_to_all


# Fan writing -----------------------------------------------------------------------------

ROUND_1 = "别怕！口语考试就像冒险，大声说出来就好了！我陪你一起练，肉管够！"
FOLLOWUP = "可是我一开口就结巴，怎么办？"
ROUND_2 = "结巴也没关系！我第一次出海也手忙脚乱的。每天对着大海喊一句，你会越来越勇敢！"


def make_writer(email, characters, *, approve=True):
    """Screened like an annotator (consent, quiz passed), then approved to write."""
    user = UserFactory(email=email)
    profile = services.consent_give(user=user)
    for character in characters:
        Qualification.objects.update_or_create(
            profile=profile, character=character, defaults={"status": QualificationStatus.PASSED}
        )
        application = writing_services.writer_apply(
            user=user,
            character=character,
            sample="我是路飞！要当海贼王的男人！别难过，吃饱了再说！",
        )
        if approve:
            writing_services.writer_review(
                application=application,
                reviewer=UserFactory(email="boss@example.com"),
                approve=True,
            )
    return user


def make_run(characters, scenarios, **options):
    return writing_services.run_create(
        name=options.pop("name", "Fans 2026"),
        source_slug=options.pop("source_slug", "fans-2026"),
        characters=characters,
        scenarios=scenarios,
        **options,
    )


# Participant panels ----------------------------------------------------------------------

PROLIFIC_PID = "5f1e2d3c4b5a69788796a5b4"


def make_panel_study(study, **settings):
    """`study` opened to Prolific (open, 10 items each, no limit on places) by a command
    run without a user, as staff would open it; `settings` change any of that."""
    wanted = {
        "provider": "prolific",
        "completion_code": "C1A2B3",
        "screen_out_code": "SCREENED",
        "items_per_participant": 10,
        "is_open": True,
        **settings,
    }
    return panel_services.panel_configure(study=study, actor=None, **wanted)


def panel_participant(panel_study, pid=PROLIFIC_PID):
    """The participant the panel sends with `pid`, as the join link makes them."""
    return panel_services.participant_join(panel_study=panel_study, pid=pid)
