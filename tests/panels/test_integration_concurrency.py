"""Two tabs opening the panel's link at the same moment on PostgreSQL: one person, one
account, one annotator profile, both tabs signed in to it."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from annotation.models import AnnotatorProfile
from panels import services
from panels.models import Participant
from tests.builders import PROLIFIC_PID, make_panel_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TABS = 8


def join(panel, start: threading.Barrier, joined: list, errors: list, pid=PROLIFIC_PID):
    try:
        start.wait()
        joined.append(services.participant_join(panel_study=panel, pid=pid).pk)
    except Exception as error:  # collected and reported by the test
        errors.append(repr(error))
    finally:
        connection.close()


def run_at_once(targets) -> None:
    threads = [threading.Thread(target=join, args=args) for args in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)


def test_many_tabs_with_the_same_id_at_once_make_one_participant(postgres, study):
    panel = make_panel_study(study)
    users = get_user_model().objects.count()
    start, joined, errors = threading.Barrier(TABS), [], []

    run_at_once([(panel, start, joined, errors)] * TABS)

    assert errors == []
    assert len(joined) == TABS and len(set(joined)) == 1
    assert Participant.objects.count() == 1
    assert get_user_model().objects.count() == users + 1
    assert AnnotatorProfile.objects.filter(user__panel_participant__isnull=False).count() == 1


def test_the_last_place_goes_to_one_newcomer_only(postgres, study):
    panel = make_panel_study(study, places=1)
    start, joined, errors = threading.Barrier(TABS), [], []

    run_at_once([(panel, start, joined, errors, f"person-{n}") for n in range(TABS)])

    assert len(joined) == 1
    assert len(errors) == TABS - 1 and all("PanelError" in error for error in errors)
    assert Participant.objects.count() == 1
