"""Every web process and node gives the same answer about a study's staffing and open
work, and a staff change counts from the next request of every process: two processes,
this one and a second one (tests/fixtures/staffing_reader.py), on PostgreSQL and Redis."""

import json
import os
import subprocess
import sys

import pytest

from annotation import services
from annotation.models import Assignment, Qualification, StudyStatus
from annotation.selectors import ordering, staffing, study_capacity
from tests.builders import approved_annotator, make_study
from tests.fixtures.services import REPO, database_url_of_test_database
from tests.helpers import submit_item

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def other_process(postgres, redis_url):
    process = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fixtures" / "staffing_reader.py")],
        cwd=REPO,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
            "DATABASE_URL": database_url_of_test_database(),
            "REDIS_URL": redis_url,
        },
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def ask(*words) -> dict:
        process.stdin.write(" ".join(str(w) for w in words) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        assert line, f"the other process ended (exit {process.wait(timeout=10)})"
        return json.loads(line)

    yield ask
    process.stdin.close()
    process.wait(timeout=20)


def here(study, luffy) -> dict:
    """This process's answer, as the other one gives it."""
    return {
        "raters": {
            str(c): sorted(people)
            for c, people in staffing.raters_by_character(study, [luffy.pk]).items()
        },
        "tight": sorted(ordering.tightly_staffed(study)),
        "at_cap": sorted(staffing.at_their_cap(study)),
    }


def test_a_staff_change_counts_on_the_next_request_of_every_process(
    other_process, demo_dataset, luffy
):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    (row,) = study_capacity(study)
    team = [approved_annotator(f"team{i}@example.com", [luffy]) for i in range(row.needed)]
    everyone = sorted(a.pk for a in team)

    # Both processes read the staffing and keep what they read.
    seen_there = other_process("staffing", study.pk)
    assert seen_there == here(study, luffy)
    assert seen_there["raters"] == {str(luffy.pk): everyone}
    assert seen_there["tight"] == [luffy.pk]

    # Staff revoke one annotator's approval here: the other process knows at once, and
    # the character now has fewer annotators than it needs.
    revoked = team[-1]
    services.qualification_review(
        qualification=Qualification.objects.get(profile__user=revoked, character=luffy),
        reviewer=None,
        approve=False,
        note="revoked",
    )
    seen_there = other_process("staffing", study.pk)
    assert seen_there == here(study, luffy)
    assert revoked.pk not in seen_there["raters"][str(luffy.pk)]
    assert seen_there["tight"] == []

    # A cap staff set counts for someone who has reached it, there as here.
    first = team[0]
    submit_item(first, services.assignment_next(user=first, study=study))
    assert other_process("staffing", study.pk)["at_cap"] == []
    services.study_caps_set(
        study=study, actor=None, caps={"cap_per_annotator": 1, "cap_per_annotator_per_day": 0}
    )
    assert other_process("staffing", study.pk)["at_cap"] == [first.pk]

    # A study staff pause gives no more leases in the other process, though it planned
    # (and kept) that annotator's worklist before.
    second = team[1]
    assert other_process("next", study.pk, second.pk)["lease"] is not None
    submit_item(second, Assignment.objects.get(annotator=second, state="active"))
    services.study_set_status(study=study, status=StudyStatus.PAUSED)
    assert other_process("next", study.pk, second.pk) == {"lease": None}
