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
