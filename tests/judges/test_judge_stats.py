"""The pure judge figures checked against reference computations (the `krippendorff`
package, numpy's correlation and least squares) and on hand-made verdicts."""

import itertools

import krippendorff
import numpy as np

from annotation.stats.rules import Rules
from annotation.stats.style import decorations
from judges.stats import LEFT, RIGHT, TIE, JudgeInputs, Scores, Verdicts, judge_figures
from judges.stats.agreement import alpha_with_judge, extra_fan, score_correlation
from judges.stats.biases import left_rate, same_side_both_orders, self_preference
from judges.stats.boards import _spearman
from judges.stats.intervals import clustered_slope
from judges.stats.style import adjusted_difference

RULES = Rules(draws=500, seed=3, min_judgments=10, min_annotators=3)


def human_and_judge_scores(rng, answers=40, annotators=5):
    truth = rng.integers(1, 6, answers)
    rows, judge_rows = [], []
    for answer in range(answers):
        cell = answer // 2
        for rater in rng.choice(annotators, size=3, replace=False):
            value = int(np.clip(truth[answer] + rng.integers(-1, 2), 1, 5))
            rows.append((answer + 100, answer // 2, cell, rater + 1, 1, answer % 2, 7, value))
        judge_rows.append((answer + 100, answer // 2, cell, 0, 1, answer % 2, 7, truth[answer]))
    return Scores.from_rows(rows), Scores.from_rows(judge_rows)


def reliability_matrix(scores: Scores, extra: Scores | None = None):
    raters = sorted(set(scores.rater.tolist()))
    answers = sorted(set(scores.answer.tolist()))
    matrix = np.full((len(raters) + (extra is not None), len(answers)), np.nan)
    for rater, answer, value in zip(scores.rater, scores.answer, scores.value, strict=True):
        matrix[raters.index(rater), answers.index(answer)] = value
    if extra is not None:
        for answer, value in zip(extra.answer, extra.value, strict=True):
            matrix[-1, answers.index(answer)] = value
    return matrix


def test_alpha_of_the_humans_and_with_the_judge_match_the_krippendorff_package():
    human, judge = human_and_judge_scores(np.random.default_rng(1))
    found = alpha_with_judge(human, judge, RULES)
    expected_humans = krippendorff.alpha(
        reliability_data=reliability_matrix(human),
        level_of_measurement="ordinal",
        value_domain=[1, 2, 3, 4, 5],
    )
    expected_with_judge = krippendorff.alpha(
        reliability_data=reliability_matrix(human, judge),
        level_of_measurement="ordinal",
        value_domain=[1, 2, 3, 4, 5],
    )
    assert abs(found["humans"]["alpha"] - expected_humans) < 1e-6
    assert abs(found["with_judge"]["alpha"] - expected_with_judge) < 1e-6
    assert found["with_judge"]["ci_low"] < found["with_judge"]["alpha"]
    assert found["enough_data"] and found["units"] == 40


def test_the_correlation_is_pearsons_r_of_the_answers_mean_scores():
    human, judge = human_and_judge_scores(np.random.default_rng(2))
    found = score_correlation(human, judge, RULES)
    means = [human.value[human.answer == a].mean() for a in np.unique(judge.answer)]
    expected = np.corrcoef(judge.value, means)[0, 1]
    assert abs(found["r"] - expected) < 1e-6
    assert found["ci_low"] < found["r"] < found["ci_high"]


def test_the_slope_is_least_squares_and_its_interval_the_cluster_robust_one():
    rng = np.random.default_rng(4)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    cell = np.arange(60) // 3
    found = clustered_slope(x, y, cell, np.zeros(60, dtype=int), RULES, judge=True)
    slope, intercept = np.polyfit(x, y, 1)
    assert abs(found["slope"] - slope) < 1e-6
    # Written out: CR1 by cell, t on cells - 1 degrees of freedom (20 cells: 2.093).
    centred = x - x.mean()
    residual = y - intercept - slope * x
    sums = np.array([(centred * residual)[cell == c].sum() for c in range(20)])
    variance = 20 / 19 * (sums**2).sum() / (centred**2).sum() ** 2
    half = 2.093 * np.sqrt(variance)
    assert abs(found["ci_low"] - (slope - half)) < 2e-3
    assert abs(found["ci_high"] - (slope + half)) < 2e-3


def test_spearman_is_the_correlation_of_the_ranks():
    a, b = np.array([[3.1, 2.0, 4.5, 1.2]]), np.array([[2.9, 3.5, 4.0, 1.0]])
    ranks = lambda v: np.argsort(np.argsort(v))  # noqa: E731
    assert abs(_spearman(a, b)[0] - np.corrcoef(ranks(a[0]), ranks(b[0]))[0, 1]) < 1e-9


def test_spearman_gives_tied_values_their_mean_rank_however_the_sources_are_numbered():
    # Sources are numbered by id in the database and by first appearance in a snapshot:
    # a correlation that broke ties by position would not reproduce.
    a, b = np.array([[3.0, 2.0, 3.0, 1.0]]), np.array([[2.0, 3.0, 4.0, 1.0]])
    expected = np.corrcoef([2.5, 1, 2.5, 0], [1, 2, 3, 0])[0, 1]
    for numbering in itertools.permutations(range(4)):
        columns = list(numbering)
        assert abs(_spearman(a[:, columns], b[:, columns])[0] - expected) < 1e-12


def verdicts(rows):
    """(item, cell, order, left source, right source, preferred) with lengths and scores."""
    return Verdicts.from_rows(
        [(i, c, 0, o, ls, rs, 10, 20, p, 3.0, 3.0) for i, c, o, ls, rs, p in rows]
    )


def test_position_figures_count_the_left_side_and_the_side_kept_in_both_orders():
    rows = []
    for item in range(12):
        rows.append((item, item, 1, 1, 2, LEFT))
        rows.append((item, item, 2, 2, 1, LEFT if item < 9 else RIGHT))
    rows.append((99, 99, 1, 1, 2, TIE))
    found = verdicts(rows)
    left = left_rate(found, RULES, judge=True)
    assert (left["count"], left["n"]) == (21, 24)
    same = same_side_both_orders(found, RULES)
    assert (same["count"], same["n"]) == (9, 12)


def test_self_preference_is_the_judges_share_minus_the_humans_on_the_same_pairs():
    judge = verdicts([(i, i, 1, 5, 6, LEFT if i % 4 else RIGHT) for i in range(20)])
    human = Verdicts.from_rows(
        [
            (i, i, r, 1, 5, 6, 10, 20, LEFT if (i + r) % 2 else RIGHT, 3.0, 3.0)
            for i in range(20)
            for r in (1, 2, 3)
        ]
    )
    inputs = JudgeInputs(judge, Scores.from_rows([]), human, Scores.from_rows([]), {}, {5: "x"},
                         None, 5)  # fmt: skip
    found = self_preference(inputs, RULES)
    assert found["judge"]["rate"] == 0.75 and found["humans"]["rate"] == 0.5
    assert abs(found["difference"] - 0.25) < 1e-9
    assert found["ci_low"] < 0.25 < found["ci_high"]


def test_without_human_judgments_every_comparison_says_not_enough_data():
    judge_verdicts = verdicts([(i, i, 1, 1, 2, LEFT) for i in range(20)])
    _human, judge_scores = human_and_judge_scores(np.random.default_rng(5))
    inputs = JudgeInputs(
        judge_verdicts, judge_scores, Verdicts.from_rows([]), Scores.from_rows([]),
        {7: "fluency"}, {0: "a", 1: "b"}, 1, 2,
    )  # fmt: skip
    figures = judge_figures(inputs, RULES)
    assert figures["note"] == "not enough data"
    assert figures["agreement"]["fluency"]["alpha"]["enough_data"] is False
    assert figures["biases"]["self_preference"]["enough_data"] is False
    assert figures["biases"]["position"]["humans"]["enough_data"] is False
    assert figures["biases"]["position"]["judge"]["rate"] == 1.0


def test_the_extra_fan_figure_is_the_mean_distances_written_out():
    human, judge = human_and_judge_scores(np.random.default_rng(6))
    found = extra_fan(human, judge, RULES)
    to_judge, to_fans = [], []
    for answer in np.unique(human.answer):
        fans = human.value[human.answer == answer]
        verdict = judge.value[judge.answer == answer].mean()
        to_judge += [abs(f - verdict) for f in fans]
        to_fans += [abs(a - b) for i, a in enumerate(fans) for b in fans[i + 1 :]]
    assert abs(found["judge_to_fan"] - np.mean(to_judge)) < 1e-6
    assert abs(found["fan_to_fan"] - np.mean(to_fans)) < 1e-6
    assert found["ci_low"] < found["difference"] < found["ci_high"]


def test_emoji_and_kaomoji_are_counted():
    assert decorations("别担心😊（＾▽＾）我们一起加油！^_^ ✨") == 4
    assert decorations("没有表情，只有（括号里的话）。") == 0


def test_the_style_adjusted_difference_is_the_intercept_of_least_squares():
    """Answers of the compared source are longer; raters reward length and nothing else:
    the plain difference is positive, the one adjusted for length is about zero."""
    rng = np.random.default_rng(8)
    n = 120
    length = rng.uniform(0.2, 1.0, n)  # hundreds of characters longer
    decorated = rng.integers(-1, 2, n)
    difference = 1.5 * length + 0.1 * decorated + rng.normal(0, 0.3, n)
    cell, rater = np.arange(n) // 4, np.arange(n) % 6
    rows = [(9, difference[i], length[i], decorated[i], cell[i], rater[i]) for i in range(n)]
    found = adjusted_difference(rows, RULES, judge=False)
    design = np.column_stack([np.ones(n), length, decorated])
    intercept = np.linalg.lstsq(design, difference, rcond=None)[0][0]
    assert abs(found["adjusted"] - intercept) < 1e-6
    assert abs(found["difference"] - difference.mean()) < 1e-6
    assert found["ci_low"] > 0.5
    assert found["adjusted_ci_low"] < 0 < found["adjusted_ci_high"]


def test_alpha_takes_an_answer_within_its_pair_as_the_unit_whatever_the_rows_order():
    # Each answer is shown in two pairs (items), as a reference answer is; the judge rates
    # it differently in each (the same in both orders of a pair). The unit is the answer
    # within its pair, as in the study's own agreement: one judge rating per unit, so the
    # figure is the krippendorff package's on those units, and never depends on which of
    # the judge's rows comes first (the database's order or the snapshot's).
    rng = np.random.default_rng(8)
    rows, judge_rows = [], []
    for answer in range(30):
        cell = answer // 3
        for item in (2 * answer, 2 * answer + 1):
            truth = int(rng.integers(1, 6))
            for rater in rng.choice(5, size=3, replace=False):
                value = int(np.clip(truth + rng.integers(-1, 2), 1, 5))
                rows.append((answer + 100, item, cell, rater + 1, 1, answer % 2, 7, value))
            for order in (1, 2):
                judge_rows.append((answer + 100, item, cell, 0, order, answer % 2, 7, truth))
    human = Scores.from_rows(rows)
    found = alpha_with_judge(human, Scores.from_rows(judge_rows), RULES)
    shuffled = [judge_rows[i] for i in rng.permutation(len(judge_rows))]
    assert alpha_with_judge(human, Scores.from_rows(shuffled), RULES) == found
    assert alpha_with_judge(human, Scores.from_rows(judge_rows[::-1]), RULES) == found

    units = sorted({(item, answer) for answer, item, *_rest in rows})
    matrix = np.full((6, len(units)), np.nan)
    for answer, item, _cell, rater, _order, _source, _metric, value in rows:
        matrix[rater - 1, units.index((item, answer))] = value
    for answer, item, *_rest, value in judge_rows:
        matrix[5, units.index((item, answer))] = value
    for key, raters in (("humans", matrix[:5]), ("with_judge", matrix)):
        expected = krippendorff.alpha(
            reliability_data=raters, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
        )
        assert abs(found[key]["alpha"] - expected) < 1e-6, key
    assert found["units"] == 60
