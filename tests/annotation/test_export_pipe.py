"""`export_ratings | head`: a reader that stops early, through a real pipe to a real
process, on PostgreSQL (the process reads the test database)."""

import os
import subprocess
import sys

import pytest

from annotation.simulation import simulate_study
from tests.builders import make_study
from tests.fixtures.services import REPO, database_url_of_test_database

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_an_export_whose_reader_has_gone_ends_quietly_and_without_an_error(
    postgres, demo_dataset, luffy
):
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    simulate_study(study=study, annotators=3, seed=1)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "export_ratings", "--study", study.slug],
        cwd=REPO,
        env={**os.environ, "DATABASE_URL": database_url_of_test_database()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # The reader goes before a row is written, as `head -0` would: every write of the
    # export meets a closed pipe.
    process.stdout.close()
    _, complaints = process.communicate(timeout=120)

    assert complaints.decode() == ""
    assert process.returncode == 0
