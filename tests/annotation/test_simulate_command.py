"""`simulate_study` says how the work came out among its annotators, and says so when a
skewed crowd was asked for and could not be had."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.simulation import annotators_for
from annotation.stats.crowd import effective_number
from tests.builders import make_study

pytestmark = pytest.mark.django_db


def simulate(study, *args):
    out, err = StringIO(), StringIO()
    call_command("simulate_study", "--study", study.slug, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_with_just_the_annotators_needed_a_skew_asked_for_is_said_not_to_show(demo_dataset, luffy):
    study = make_study(overlap=2, rounds=(1,), characters=[luffy])

    out, err = simulate(study, "--workload-sd", "1.5")

    assert f"of the {annotators_for(study)} who rated)." in out and "Workloads: " in out
    assert "the workloads came out nearly even" in err.lower()
    assert "Give more --annotators" in err


def test_with_more_annotators_than_needed_a_few_do_most_of_the_work(demo_dataset, luffy):
    study = make_study(overlap=2, rounds=(1,), characters=[luffy])
    crowd = 4 * annotators_for(study)

    out, err = simulate(study, "--annotators", str(crowd), "--workload-sd", "1.5", "--seed", "2")

    line = next(line for line in out.splitlines() if line.startswith("Workloads: "))
    effective = float(line.split("effective number of annotators ")[1].split(" of ")[0])
    assert effective < 0.8 * crowd
    assert err == ""


def test_the_effective_number_counts_even_workloads_whole_and_one_busy_annotator_as_about_one():
    assert effective_number([5, 5, 5, 5]) == 4
    assert effective_number([100, 1, 1]) == pytest.approx(1.04, abs=0.01)
    assert effective_number([]) == 0


def test_a_study_with_assigned_annotators_takes_the_simulated_ones_in(demo_dataset, luffy, alice):
    from annotation import services
    from annotation.models import Judgment

    study = make_study(overlap=2, rounds=(1,), characters=[luffy])
    services.membership_add(study=study, annotator=alice, actor=None)

    out, _err = simulate(study, "--annotators", "6")

    assert Judgment.objects.filter(item__study=study, simulated=True).count() > 0
    assert not out.startswith("0 simulated judgments")
