"""Two tabs opening the panel's link at the same moment on PostgreSQL: one person, one
account, one annotator profile, both tabs signed in to it. And what a participant's
request locks while it writes: their own rows, never the study's, which every judgment
and lease of the study needs (a study going live on a panel takes hundreds of newcomers
a minute while the first of them rate)."""

import contextlib
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection, transaction

from annotation.models import AnnotatorProfile
from panels import services
from panels.models import Participant
from tests.builders import PROLIFIC_PID, make_panel_study, panel_participant

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


@contextlib.contextmanager
def held_open(call):
    """`call()` in a transaction of another connection, left open (its row locks held)
    until the block ends: another request caught in the middle of the same write."""
    called, release, errors = threading.Event(), threading.Event(), []

    def run():
        try:
            with transaction.atomic():
                call()
                called.set()
                release.wait(30)
        except Exception as error:  # collected and reported by the test
            errors.append(repr(error))
        finally:
            called.set()
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    called.wait(30)
    try:
        assert errors == []
        yield
    finally:
        release.set()
        thread.join(timeout=30)


def lockable(table: str, pk: int, mode: str) -> bool:
    """Whether this connection can take `mode` on the row at once."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR {mode} NOWAIT", [pk])
        return True
    except OperationalError:
        return False


# What saving a judgment, a lease or a membership of the study takes on the study's row
# (the foreign-key check), and what a newcomer's join takes on the panel's row.
STUDY_WRITE = "KEY SHARE"
NEWCOMER = "NO KEY UPDATE"


def test_a_newcomer_joining_keeps_the_study_free_for_its_judgments(postgres, study):
    panel = make_panel_study(study)

    with held_open(lambda: services.participant_join(panel_study=panel, pid="newcomer")):
        assert lockable("annotation_study", study.pk, STUDY_WRITE)
        # Newcomers still queue on the panel's row (the last place goes to one of them).
        assert not lockable("panels_panelstudy", panel.pk, NEWCOMER)


def test_a_participant_choosing_characters_holds_up_neither_newcomers_nor_judgments(
    postgres, study
):
    panel = make_panel_study(study)
    participant = panel_participant(panel)
    services.participant_consent(participant=participant)
    character = study.characters.first()

    with held_open(
        lambda: services.participant_admit(participant=participant, characters=[character])
    ):
        assert lockable("annotation_study", study.pk, STUDY_WRITE)
        assert lockable("panels_panelstudy", panel.pk, NEWCOMER)
