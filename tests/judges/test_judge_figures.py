"""The judge figures recover a planted bias with an interval that excludes no-bias, and
report none where none was planted: judges with a known policy (the local server) beside
fans with a known policy (tests/judges/fans.py, who prefer no side, length or source)."""

import pytest

from annotation.models import Judgment
from annotation.services import study_recompute
from judges.models import JudgeRun
from judges.selectors import judge_report
from tests.builders import make_study
from tests.fixtures.judge_server import neutral, prefers_left, prefers_longer, prefers_texts

from .conftest import judge
from .fans import fans_rate

# The annotators' sides come from a coin and a schedule seeded by study and annotator ids:
# with the ids reset and the coin seeded (`fans_rate`), every run sees the same sides. An
# unbiased rater's 95 % interval still misses 0.5 one time in twenty over other seeds.
pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)


@pytest.fixture
def rated_study(demo_dataset):
    """Round 1 of the demo: 3 characters x 8 scenarios x 3 models against the fans."""
    study = make_study(rounds=(1,))
    assert fans_rate(study) > 0
    study_recompute(study=study)
    return study


def figures_of(server, study, policy, *extra):
    server.policy = policy
    # The endpoint's default rate (60 calls a minute) would make this a two-minute test.
    judge(server, study, "--both-orders", "--rate", "100000", *extra)
    return judge_report(JudgeRun.objects.get())["figures"]


def excludes(figure, value):
    assert figure["enough_data"], figure
    return not figure["ci_low"] <= value <= figure["ci_high"]


def includes(figure, value):
    assert figure["enough_data"], figure
    return figure["ci_low"] <= value <= figure["ci_high"]


def test_a_judge_that_reads_the_answers_shows_no_bias_and_agrees_with_the_fans(
    rated_study, judge_key, judge_server
):
    figures = figures_of(judge_server, rated_study, neutral, "--self-source", "kumo-7b")
    position, length = figures["biases"]["position"], figures["biases"]["length"]
    assert includes(position["judge"], 0.5) and includes(position["humans"], 0.5)
    assert position["judge_same_side_both_orders"]["rate"] == 0
    assert includes(length["judge_longer_preferred"], 0.5)
    assert includes(length["humans_longer_preferred"], 0.5)
    assert includes(length["judge_slope"], 0.0) and includes(length["humans_slope"], 0.0)
    assert includes(figures["biases"]["self_preference"], 0.0)
    correlation = figures["agreement"]["overall"]["correlation"]
    assert correlation["r"] > 0.8 and correlation["ci_low"] > 0.5
    fluency = figures["agreement"]["fluency"]["alpha"]
    assert fluency["with_judge"]["alpha"] >= fluency["humans"]["alpha"] - 0.05
    # The fans' scores are the judge's plus noise: it is closer to a fan than fans are to
    # each other.
    extra_fan = figures["agreement"]["overall"]["extra_fan"]
    assert extra_fan["difference"] < 0 and extra_fan["ci_high"] < 0
    assert figures["leaderboard"]["rank_correlation"]["spearman"] > 0.5
    assert figures["headline"]["holds"] is True


def test_a_judge_that_prefers_the_left_side_is_caught(rated_study, judge_key, judge_server):
    figures = figures_of(judge_server, rated_study, prefers_left)
    position = figures["biases"]["position"]
    assert position["judge"]["rate"] == 1.0 and excludes(position["judge"], 0.5)
    assert includes(position["humans"], 0.5)
    assert position["judge_same_side_both_orders"]["rate"] == 1.0
    assert excludes(position["judge_same_side_both_orders"], 0.5)
    # Its scores follow the side alone: over both orders every answer gets the same mean,
    # so there is nothing to correlate with the fans.
    correlation = figures["agreement"]["overall"]["correlation"]
    assert correlation["r"] is None and correlation["note"] == "no variation in the scores"
    fluency = figures["agreement"]["fluency"]["alpha"]
    assert fluency["with_judge"]["alpha"] < fluency["humans"]["alpha"]
    extra_fan = figures["agreement"]["overall"]["extra_fan"]
    assert extra_fan["difference"] > 0 and extra_fan["ci_low"] > 0


def test_a_judge_that_prefers_the_longer_answer_is_caught(rated_study, judge_key, judge_server):
    figures = figures_of(judge_server, rated_study, prefers_longer)
    length = figures["biases"]["length"]
    assert excludes(length["judge_longer_preferred"], 0.5)
    # Every decided verdict: at 1 the interval rests on the number of cells (24).
    assert length["judge_longer_preferred"]["rate"] == 1.0
    assert length["judge_longer_preferred"]["ci_low"] > 0.8
    assert excludes(length["judge_slope"], 0.0) and length["judge_slope"]["slope"] > 0
    assert includes(length["humans_longer_preferred"], 0.5)
    assert includes(length["humans_slope"], 0.0)
    assert includes(figures["biases"]["position"]["judge"], 0.5)


def test_a_judge_that_prefers_its_own_family_is_caught(rated_study, judge_key, judge_server):
    own = [a.text.strip() for a in rated_study.items.first().answers.model.objects.filter(
        source__slug="starling-rp"
    )]  # fmt: skip
    figures = figures_of(
        judge_server, rated_study, prefers_texts(own), "--self-source", "starling-rp"
    )
    self_preference = figures["biases"]["self_preference"]
    assert self_preference["judge"]["rate"] == 1.0
    assert includes(self_preference["humans"], 0.5)
    assert excludes(self_preference, 0.0) and self_preference["difference"] > 0.3
    assert includes(figures["biases"]["position"]["judge"], 0.5)


def test_without_human_judgments_the_figures_say_not_enough_data(
    demo_dataset, judge_key, judge_server
):
    study = make_study(rounds=(1,))
    figures = figures_of(judge_server, study, neutral, "--items", "20", "--self-source", "kumo-7b")
    assert Judgment.objects.count() == 0
    assert figures["note"] == "not enough data"
    assert figures["biases"]["position"]["humans"]["enough_data"] is False
    assert figures["biases"]["self_preference"]["note"] == "not enough data"
    assert figures["agreement"]["fluency"]["alpha"]["note"] == "not enough data"
    assert figures["agreement"]["overall"]["correlation"]["note"] == "not enough data"
    assert figures["leaderboard"]["note"] == "not enough data"
    assert figures["headline"]["holds"] is None
    # The judge's own figures stand on their own.
    assert figures["biases"]["position"]["judge"]["enough_data"] is True
