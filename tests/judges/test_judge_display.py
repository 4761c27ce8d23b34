"""The judge figures as the results page writes them: rounded as `judge_report` prints
them, never cut (an interval's bounds read where they are)."""

from judges.selectors.display import alpha_lines, figure_lines, style_lines


def test_a_judge_alpha_and_its_interval_are_rounded_as_the_command_prints_them():
    figures = {
        "agreement": {
            "fluency": {
                "alpha": {
                    "humans": {"alpha": 0.528846, "ci_low": 0.3227, "ci_high": 0.8058},
                    "with_judge": {"alpha": 0.409023, "ci_low": -0.643356, "ci_high": 0.999},
                }
            }
        }
    }

    [line] = alpha_lines(figures, {"fluency": "Fluency"})

    assert line.humans == "0.53 [0.32, 0.81]"
    assert line.with_judge == "0.41 [-0.64, 1.00]"


def test_a_judge_style_difference_is_rounded():
    humans = {"difference": 1.996, "ci_low": 1.405, "ci_high": 2.597}
    judge = {"difference": 0.126, "ci_low": None, "adjusted": -0.337}
    figures = {
        "style": {
            "rows": [{"source": "kumo-7b", "metric": "fluency", "humans": humans, "judge": judge}]
        }
    }

    [line] = style_lines(figures, {"fluency": "Fluency"})

    assert line.humans == "2.00 [1.41, 2.60]"
    assert line.judge == "0.13 (no interval: not enough data)"
    assert line.judge_adjusted == "-0.34 (no interval: not enough data)"


def test_each_judge_share_says_how_many_verdicts_it_counts_and_a_slope_its_n():
    share = {"n": 70, "count": 35, "rate": 0.5, "ci_low": 0.3727, "ci_high": 0.6273}
    slope = {"n": 72, "slope": 5.5913, "ci_low": 5.2091, "ci_high": 5.9735}
    figures = {
        "biases": {
            "position": {"judge": share, "judge_same_side_both_orders": None, "humans": None},
            "length": {
                "judge_longer_preferred": share,
                "humans_longer_preferred": None,
                "judge_slope": slope,
                "humans_slope": None,
            },
            "self_preference": {},
        },
        "agreement": {"overall": {"correlation": {"n": 48, "r": 0.73, "ci_low": None}}},
        "leaderboard": {},
        "headline": {},
    }

    lines = {line.label: line for line in figure_lines(figures)}

    assert lines["Left answer preferred"].judge == "0.50 [0.37, 0.63] · 35 of 70"
    assert lines["Left answer preferred"].humans == "not enough data"
    assert lines["Score difference per 100 characters"].judge == "5.59 [5.21, 5.97] · n = 72"
    correlation = lines["Correlation with the humans' mean score"].judge
    assert correlation == "0.73 (no interval: not enough data) · n = 48"


def test_a_bound_just_below_zero_reads_zero_on_the_page_and_in_the_command():
    from judges.management.commands.judge_report import two

    humans = {"difference": 0.41, "ci_low": -0.001, "ci_high": 0.82}
    judge = {"difference": -0.004, "ci_low": None, "adjusted": 0.1}
    figures = {
        "style": {
            "rows": [{"source": "kumo-7b", "metric": "fluency", "humans": humans, "judge": judge}]
        }
    }

    [line] = style_lines(figures, {"fluency": "Fluency"})

    assert line.humans == "0.41 [0.00, 0.82]"
    assert line.judge.startswith("0.00 ")
    assert two(-0.001) == "0.00" and two(-0.006) == "-0.01" and two(0.629) == "0.63"


def rank_line(leaderboard: dict) -> str:
    figures = {
        "biases": {
            "position": {"judge": None, "judge_same_side_both_orders": None, "humans": None},
            "length": dict.fromkeys(
                ("judge_longer_preferred", "humans_longer_preferred", "judge_slope", "humans_slope")
            ),
            "self_preference": {},
        },
        "agreement": {"overall": {"correlation": None}},
        "leaderboard": leaderboard,
        "headline": {},
    }
    from django.utils.translation import gettext

    lines = {line.label: line for line in figure_lines(figures)}
    return lines[gettext("Rank correlation of the leaderboards")].judge


def test_a_rank_correlation_of_few_sources_is_shown_without_its_collapsed_interval():
    """Four sources: the bootstrap's percentiles fall on the few values a rank correlation
    of four takes, and the lower bound on the estimate itself."""
    from django.utils import translation

    rank = {"spearman": 0.4, "ci_low": 0.4, "ci_high": 1.0, "sources": 4}

    english = rank_line({"rank_correlation": rank, "sources": 4})
    with translation.override("zh-hans"):
        chinese = rank_line({"rank_correlation": rank, "sources": 4})
    # Stored before the rule: the number of sources beside the correlation, not in it.
    older = {key: value for key, value in rank.items() if key != "sources"}

    assert english == (
        "0.40 (no interval: a rank correlation of 4 sources takes too few values for the "
        "bootstrap's percentiles)"
    )
    assert chinese.startswith("0.40（无区间：4 个来源的等级相关取值太少")
    assert "[" not in english + chinese
    assert rank_line({"rank_correlation": older, "sources": 4}) == english


def test_a_rank_correlation_of_enough_sources_shows_its_interval_and_n():
    rank = {"spearman": 0.7714, "ci_low": 0.4286, "ci_high": 0.9429, "sources": 6}

    assert rank_line({"rank_correlation": rank, "sources": 6}) == "0.77 [0.43, 0.94] · n = 6"


def test_a_bound_on_the_estimate_marks_the_interval_however_many_sources():
    from judges.stats.boards import rests_on_few_values

    assert rests_on_few_values({"spearman": 0.6, "ci_low": 0.6, "ci_high": 0.9}, 6)
    assert rests_on_few_values({"spearman": 0.9, "ci_low": 0.5, "ci_high": 0.9}, 6)
    assert rests_on_few_values({"spearman": 1.0, "ci_low": 1.0, "ci_high": 1.0}, 8)
    # At 1 an upper bound of 1 is where the correlation ends, not a collapse.
    assert not rests_on_few_values({"spearman": 1.0, "ci_low": 0.7, "ci_high": 1.0}, 6)
    assert not rests_on_few_values({"spearman": 0.77, "ci_low": 0.43, "ci_high": 0.94}, 6)
    assert rests_on_few_values({"spearman": 0.77, "ci_low": 0.43, "ci_high": 0.94}, 4)
