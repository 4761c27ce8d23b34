"""The paired differences adjusted for style: the fit recovers a planted difference at
equal length, reports none where none was planted, covers by simulation, and says it
cannot separate style from the difference when lengths do not vary."""

import numpy as np
import pytest

from annotation.stats.crowd import style_pairs
from annotation.stats.figures import paired_differences, with_reference
from annotation.stats.rules import Rules
from annotation.stats.study import MetricInfo, SourceInfo
from annotation.stats.style import (
    answer_style,
    decorations,
    style_adjusted_differences,
    style_fit,
)

RULES = Rules(draws=0, seed=0, min_judgments=10, min_annotators=5)


def crossed_pairs(rng, *, difference, per_100):
    """`crowd.style_pairs` at 10 annotators with even workloads, no decorations."""
    value, length, cell, annotator = style_pairs(
        rng, annotators=10, difference=difference, per_100=per_100
    )
    return value, length, np.zeros(len(cell)), cell, annotator


def test_a_difference_at_equal_length_is_recovered_apart_from_the_length_preference():
    rng = np.random.default_rng(1)
    value, length, decorated, cell, annotator = crossed_pairs(rng, difference=0.6, per_100=0.8)

    fit = style_fit(value, length, decorated, cell, annotator)

    # Unadjusted, the longer answers' advantage adds about 0.64 to the difference.
    assert value.mean() > 1.0
    assert fit is not None
    assert fit.ci_low < 0.6 < fit.ci_high and fit.ci_low > 0
    assert fit.per_100_characters == pytest.approx(0.8, abs=0.25)


def test_no_difference_once_length_is_accounted_for():
    rng = np.random.default_rng(2)
    value, length, decorated, cell, annotator = crossed_pairs(rng, difference=0.0, per_100=1.2)

    fit = style_fit(value, length, decorated, cell, annotator)

    assert value.mean() > 0.5  # the plain difference says the compared source is better
    assert fit is not None and fit.ci_low < 0 < fit.ci_high


def test_the_adjusted_interval_covers_by_simulation():
    rng = np.random.default_rng(3)
    covered = 0
    runs = 400
    for _ in range(runs):
        value, length, decorated, cell, annotator = crossed_pairs(rng, difference=0.4, per_100=0.5)
        fit = style_fit(value, length, decorated, cell, annotator)
        assert fit is not None
        covered += fit.ci_low <= 0.4 <= fit.ci_high
    # 95 % with a Monte Carlo standard error of about 1.1 points over 400 runs.
    assert 0.92 <= covered / runs <= 0.985


def test_a_single_rater_is_clustered_by_cell_alone():
    rng = np.random.default_rng(4)
    value, length, decorated, cell, _annotator = crossed_pairs(rng, difference=0.5, per_100=0.0)

    fit = style_fit(value, length, decorated, cell)

    assert fit is not None and fit.df == pytest.approx(39, abs=1)
    assert fit.ci_low < 0.5 < fit.ci_high


def test_decorations_enter_the_fit_only_when_they_vary():
    rng = np.random.default_rng(5)
    value, length, _none, cell, annotator = crossed_pairs(rng, difference=0.2, per_100=0.3)
    decorated = rng.integers(-2, 3, len(value)).astype(float)

    with_decorations = style_fit(value + 0.4 * decorated, length, decorated, cell, annotator)
    without = style_fit(value, length, np.zeros(len(value)), cell, annotator)

    assert with_decorations is not None and without is not None
    assert with_decorations.per_decoration == pytest.approx(0.4, abs=0.15)
    assert without.per_decoration is None


def test_equal_lengths_cannot_be_told_from_the_difference():
    value = np.arange(20) % 5 - 2.0
    same = np.zeros(20)

    assert style_fit(value, same, same, np.arange(20), np.arange(20) % 5) is None
    assert style_fit([1.0, 2.0], [0.1, 0.3], [0, 0], [0, 1], [0, 1]) is None


def test_answer_style_counts_characters_emoji_and_kaomoji():
    text = "好的呀😊 我们一起加油(＾▽＾)！"

    assert decorations(text) == 2
    assert answer_style(text) == (len(text), 2)
    assert answer_style("") == (0, 0)


def study_data(rng, *, difference, per_100, judgments=600, annotators=12):
    """Counted ratings (`arrays.COLUMNS`) of a study on one metric: per judgment a
    reference answer (source 1) and a compared one (source 2), the compared answer
    longer by about 80 characters, rated `difference` + `per_100` per 100 characters
    better, on the 1-5 scale; and each answer's style."""
    judgment = np.arange(judgments)
    annotator = rng.integers(0, annotators, judgments)
    scenario = rng.integers(0, 40, judgments)
    longer = rng.normal(80, 50, judgments).round()
    reference_value = np.clip(np.round(3 + rng.normal(0, 0.7, judgments)), 1, 5)
    compared_value = np.clip(
        np.round(
            reference_value + difference + per_100 * longer / 100 + rng.normal(0, 0.7, judgments)
        ),
        1,
        5,
    )
    styles = {}
    for j in judgment.tolist():
        styles[2 * j + 1] = (100, 0)
        styles[2 * j + 2] = (int(100 + longer[j]), 0)
    both = np.concatenate
    data = {
        "value": both([reference_value, compared_value]).astype(np.int64),
        "metric": np.ones(2 * judgments, dtype=np.int64),
        "judgment": both([judgment, judgment]),
        "annotator": both([annotator, annotator]),
        "item": both([judgment, judgment]),
        "character": np.ones(2 * judgments, dtype=np.int64),
        "scenario": both([scenario, scenario]),
        "round": np.ones(2 * judgments, dtype=np.int64),
        "is_pair": np.ones(2 * judgments, dtype=np.int64),
        "source": both([np.full(judgments, 1), np.full(judgments, 2)]),
        "answer": both([2 * judgment + 1, 2 * judgment + 2]),
    }
    return data, styles


def test_the_study_figure_recovers_a_planted_length_preference():
    rng = np.random.default_rng(6)
    data, styles = study_data(rng, difference=0.3, per_100=0.9)
    metrics = {1: MetricInfo(1, "fluency", "language")}
    sources = {1: SourceInfo("human", "human"), 2: SourceInfo("model", "llm")}

    plain = paired_differences(with_reference(1, data), metrics, sources, RULES)["model"]["fluency"]
    adjusted = style_adjusted_differences(with_reference(1, data), metrics, sources, styles, RULES)
    figure = adjusted["model"]["fluency"]

    assert plain["ci_low"] > 0.8  # the plain difference rewards the longer answers
    assert figure["enough_data"] and figure["ci_low"] < 0.3 < figure["ci_high"]
    assert figure["ci_high"] < plain["ci_low"]
    assert figure["per_100_characters"] == pytest.approx(0.9, abs=0.3)
    assert figure["mean_length_difference"] == pytest.approx(80, abs=8)
    assert figure["n"] == 600 and figure["annotators"] == 12


def test_the_study_figure_finds_no_difference_where_length_explains_it():
    rng = np.random.default_rng(7)
    data, styles = study_data(rng, difference=0.0, per_100=0.9)
    metrics = {1: MetricInfo(1, "fluency", "language")}
    sources = {1: SourceInfo("human", "human"), 2: SourceInfo("model", "llm")}

    figure = style_adjusted_differences(with_reference(1, data), metrics, sources, styles, RULES)[
        "model"
    ]

    assert figure["fluency"]["ci_low"] < 0 < figure["fluency"]["ci_high"]


def test_without_answer_styles_there_is_no_style_figure():
    rng = np.random.default_rng(8)
    data, _styles = study_data(rng, difference=0.3, per_100=0.0)
    metrics = {1: MetricInfo(1, "fluency", "language")}
    sources = {1: SourceInfo("human", "human"), 2: SourceInfo("model", "llm")}

    assert style_adjusted_differences(with_reference(1, data), metrics, sources, {}, RULES) == {}
