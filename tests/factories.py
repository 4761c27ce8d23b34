import factory
from django.contrib.auth import get_user_model

from annotation import services
from annotation.models import ProfileStatus, Qualification, QualificationStatus
from dialogues.models import Answer, Character, Scenario, Source, SourceKind, persona_group_for


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
