"""Pure figures comparing an LLM judge with the human raters (no Django: an import
contract holds it). `judge_figures(inputs, rules)` is the whole report."""

from annotation.stats.rules import Rules

from .agreement import agreement_figures
from .biases import bias_figures
from .boards import headline, leaderboards
from .inputs import LEFT, RIGHT, TIE, JudgeInputs, Scores, Verdicts
from .intervals import NOT_ENOUGH
from .style import style_figures

__all__ = [
    "LEFT",
    "NOT_ENOUGH",
    "RIGHT",
    "TIE",
    "JudgeInputs",
    "Scores",
    "Verdicts",
    "judge_figures",
]


def judge_figures(inputs: JudgeInputs, rules: Rules) -> dict:
    """Every figure of one judge run beside the humans of its study."""
    has_humans = len(inputs.human_verdicts) > 0
    return {
        "verdicts": len(inputs.judge_verdicts),
        "human_judgments": len(inputs.human_verdicts),
        "note": "" if has_humans else NOT_ENOUGH,
        "agreement": agreement_figures(inputs, rules),
        "biases": bias_figures(inputs, rules),
        "leaderboard": leaderboards(inputs, rules),
        "headline": headline(inputs, rules),
        "style": style_figures(inputs, rules),
    }
