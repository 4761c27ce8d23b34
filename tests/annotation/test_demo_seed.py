"""seed_demo: idempotent, and the simulated results study is never servable to real
annotators, even when seeding is interrupted."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from annotation import demo, services, simulation
from annotation.models import (
    AnnotatorProfile,
    Item,
    Judgment,
    ScreeningQuestion,
    Study,
    StudyStatus,
)
from dialogues.models import Character
from tests.builders import approved_annotator

pytestmark = pytest.mark.django_db


def seed():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def state():
    """Everything seeding writes, as counts and statuses."""
    return {
        "studies": sorted(Study.objects.values_list("name", "status")),
        "items": Item.objects.count(),
        "judgments": Judgment.objects.count(),
        "questions": ScreeningQuestion.objects.count(),
        "users": get_user_model().objects.count(),
        "simulated": AnnotatorProfile.objects.filter(simulated=True).count(),
    }


def test_seeding_twice_changes_nothing(demo_dataset):
    seed()
    first = state()

    seed()

    assert state() == first
    assert first["questions"] == 3 * 8
    assert ("Demo results (simulated)", StudyStatus.CLOSED) in first["studies"]


def test_the_simulated_study_covers_a_small_slice(demo_dataset):
    seed()

    simulated = Study.objects.get(name=demo.DEMO_RESULTS_NAME)
    # The demo set's 3 LLMs on 4 scenarios: all 3 characters fit in about 40 pairs.
    assert simulated.scenarios.count() == 4
    assert simulated.characters.count() == 3
    assert simulated.items.filter(kind="pair").count() == 3 * 4 * 3
    assert simulated.results.judgments == Judgment.objects.filter(item__study=simulated).count()
    assert not Judgment.objects.filter(item__study=simulated, simulated=False).exists()


class Interrupted(BaseException):
    """What Ctrl-C or a killed process looks like to the code being run."""


def test_an_interrupted_seed_leaves_nothing_servable(demo_dataset, monkeypatch):
    submit = services.judgment_submit
    calls = []

    def submit_then_stop(**kwargs):
        calls.append(1)
        if len(calls) == 5:
            raise Interrupted
        return submit(**kwargs)

    monkeypatch.setattr(simulation.services, "judgment_submit", submit_then_stop)
    with pytest.raises(Interrupted):
        demo.demo_results_prepare()

    assert len(calls) == 5
    assert not Study.objects.filter(name=demo.DEMO_RESULTS_NAME).exists()
    assert not Judgment.objects.exists()
    assert not AnnotatorProfile.objects.filter(simulated=True).exists()
    fan = approved_annotator("fan@example.com", list(Character.objects.all()))
    assert services.assignment_next(user=fan) is None

    # The next seed starts afresh and completes.
    monkeypatch.setattr(simulation.services, "judgment_submit", submit)
    seed()
    assert Study.objects.get(name=demo.DEMO_RESULTS_NAME).status == StudyStatus.CLOSED


def test_a_simulated_study_left_open_by_an_older_seed_is_closed(demo_dataset):
    seed()
    simulated = Study.objects.get(name=demo.DEMO_RESULTS_NAME)
    Study.objects.filter(pk=simulated.pk).update(status=StudyStatus.OPEN)

    seed()

    simulated.refresh_from_db()
    assert simulated.status == StudyStatus.CLOSED
    fan = approved_annotator("fan@example.com", list(Character.objects.all()))
    lease = services.assignment_next(user=fan)
    assert lease.item.study.name == demo.DEMO_STUDY_NAME
