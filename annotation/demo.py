"""The out-of-the-box demo: the bundled quiz questions and a ready study, so that a
newcomer who logs in as a demo annotator can rate at once."""

from django.db import transaction

from dialogues.models import Character, PersonaGroup, Scenario, Source, SourceKind

from . import services
from .models import (
    AnnotatorProfile,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
    StudyStatus,
)

DEMO_STUDY_NAME = "Demo study"
DEMO_RESULTS_NAME = "Demo results (simulated)"
# The demo study rates every character on two scenarios of each persona group (all of
# the bundled demo set; 3,200 pairs of the published data, which open in a second or two
# where all 60 scenarios would take most of a minute to generate).
DEMO_STUDY_SCENARIOS_PER_GROUP = 2
# The simulated study's slice: one scenario of each persona group, round 1, every source,
# and as many characters (up to three) as fit in about 40 pairs. Every judgment goes
# through the real leasing and submission services, so this budget is what keeps seeding
# to seconds: 3 characters of the demo set, 1 of the published data with its 10 LLMs.
DEMO_RESULTS_SCENARIOS_PER_GROUP = 1
DEMO_RESULTS_PAIRS = 40
DEMO_RESULTS_MAX_CHARACTERS = 3


def scenarios_per_group(count: int) -> list[Scenario]:
    """The first `count` scenarios of each persona group (students, office workers, ...)."""
    return [
        scenario
        for group in PersonaGroup.values
        for scenario in Scenario.objects.filter(persona_group=group).order_by("number")[:count]
    ]


@transaction.atomic
def demo_prepare(*, annotators) -> Study | None:
    """Idempotent: questions, an open study over the demo data, and the given annotators
    consented, quizzed and approved for every character of the study."""
    services.screening_questions_load()
    reference = Source.objects.filter(kind=SourceKind.HUMAN).order_by("pk").first()
    compared = list(Source.objects.filter(kind=SourceKind.LLM))
    characters = list(Character.objects.all())
    if reference is None or not compared or not characters:
        return None
    study = Study.objects.filter(name=DEMO_STUDY_NAME).first()
    if study is None:
        study = services.study_create(
            name=DEMO_STUDY_NAME,
            reference=reference,
            compared=compared,
            characters=characters,
            overlap=3,
            include_diversity=True,
            ask_human_guess=True,
        )
        study.scenarios.set(scenarios_per_group(DEMO_STUDY_SCENARIOS_PER_GROUP))
    services.study_open(study=study)
    for user in annotators:
        profile = services.consent_give(user=user)
        for character in characters:
            Qualification.objects.update_or_create(
                profile=profile,
                character=character,
                defaults={"status": QualificationStatus.APPROVED, "quiz_score": 1.0},
            )
        AnnotatorProfile.objects.filter(pk=profile.pk).update(status=ProfileStatus.APPROVED)
    return study


def demo_results_prepare() -> Study | None:
    """A second, simulated study so that the results pages have something to show from
    the first minute. Idempotent: simulated once.

    It covers a small slice (see DEMO_RESULTS_PAIRS), so that seeding takes seconds even
    on the full published data. Creating,
    simulating and closing happen in one transaction: an interrupted seed leaves no
    trace, and real annotators can never be served the study's items, because nobody
    else sees it before it is closed."""
    from .simulation import annotators_for, simulate_study

    existing = Study.objects.filter(name=DEMO_RESULTS_NAME).first()
    if existing is not None:
        if existing.status == StudyStatus.OPEN:
            # Left open by an older seed that was interrupted: never serve it.
            services.study_set_status(study=existing, status=StudyStatus.CLOSED)
        return existing
    reference = Source.objects.filter(kind=SourceKind.HUMAN).order_by("pk").first()
    compared = list(Source.objects.filter(kind=SourceKind.LLM))
    scenarios = scenarios_per_group(DEMO_RESULTS_SCENARIOS_PER_GROUP)
    if reference is None or not compared or not scenarios:
        return None
    fitting = DEMO_RESULTS_PAIRS // (len(compared) * len(scenarios))
    characters = list(
        Character.objects.order_by("pk")[: max(1, min(fitting, DEMO_RESULTS_MAX_CHARACTERS))]
    )
    with transaction.atomic():
        study = services.study_create(
            name=DEMO_RESULTS_NAME,
            reference=reference,
            compared=compared,
            characters=characters,
            rounds=(1,),
            overlap=2,
            include_diversity=True,
            ask_human_guess=True,
            gold_rate=0,
        )
        study.scenarios.set(scenarios)
        services.study_open(study=study)
        simulate_study(study=study, annotators=annotators_for(study), seed=7)
        # Closed, so that real annotators are never served its items: its results stay.
        services.study_set_status(study=study, status=StudyStatus.CLOSED)
    return study
