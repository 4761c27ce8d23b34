"""The same failing answer to a participant's second attention check sent from several tabs
at once, on PostgreSQL: one answer is recorded, the batch ends once, with one audit row
and the failed-checks code."""

import threading

import pytest
from django.db import connection

from annotation import services as annotation_services
from annotation.models import AuditAction, AuditEvent
from panels import selectors, services
from panels.models import CheckAnswer, ParticipantState
from tests.builders import lease_pair, make_panel_study, panel_participant
from tests.helpers import full_ratings

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TABS = 8


def rate(participant):
    lease = lease_pair(participant.user)
    annotation_services.judgment_submit(
        user=participant.user,
        token=lease.token,
        submission=annotation_services.Submission(ratings=full_ratings(), preference="a"),
    )


def fail_owed_check(participant):
    position, check = selectors.check_owed(participant)
    wrong = next(choice.key for choice in check.choices if choice.key != check.instructed)
    return position, check, wrong


def test_one_failing_answer_from_many_tabs_ends_the_batch_once(postgres, study, luffy):
    panel = make_panel_study(
        study, items_per_participant=3, check_positions=[1, 2], failed_checks_code="FAILED9"
    )
    participant = panel_participant(panel)
    services.participant_consent(participant=participant)
    services.participant_admit(participant=participant, characters=[luffy])
    rate(participant)
    position, check, wrong = fail_owed_check(participant)
    services.check_answer(
        participant=participant, position=position, check_key=check.key, chosen=wrong
    )
    rate(participant)
    position, check, wrong = fail_owed_check(participant)
    assert position == 2
    start, errors = threading.Barrier(TABS), []

    def answer():
        try:
            start.wait()
            services.check_answer(
                participant=participant, position=position, check_key=check.key, chosen=wrong
            )
        except Exception as error:  # collected and reported by the test
            errors.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=answer) for _ in range(TABS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert CheckAnswer.objects.filter(participant=participant, position=2).count() == 1
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.FAILED_CHECKS, "FAILED9")
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1
