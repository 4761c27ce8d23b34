"""The judge figures as the pages show them: one line per figure, the judge beside the
humans, each a number with its interval or "not enough data"."""

from dataclasses import dataclass

from django.utils.translation import get_language
from django.utils.translation import gettext as _

from common.text import rounded_number

from ..methods import judge_methods_text
from ..models import JudgeRun
from ..stats.boards import rests_on_few_values
from .runs import metrics_of_pairs, run_progress, runs_of_study


def _shown(figure: dict | None, key: str = "rate") -> str:
    if not figure or figure.get(key) is None:
        return _("not enough data")
    point = rounded_number(figure[key], 2)
    if figure.get("ci_low") is None:
        return _("%(point)s (no interval: not enough data)") % {"point": point}
    return (
        f"{point} [{rounded_number(figure['ci_low'], 2)}, {rounded_number(figure['ci_high'], 2)}]"
    )


def _with_basis(figure: dict | None, key: str = "rate") -> str:
    """The figure, then what it rests on: a share's count out of its total ("35 of 70"
    verdicts or judgments), or the n of a slope or correlation; a share alone does not
    say whether it counts 7 verdicts or 700."""
    shown = _shown(figure, key)
    if not figure or figure.get(key) is None or figure.get("n") is None:
        return shown
    if figure.get("count") is not None:
        return _("%(shown)s · %(count)s of %(n)s") % {
            "shown": shown,
            "count": figure["count"],
            "n": figure["n"],
        }
    return _("%(shown)s · n = %(n)s") % {"shown": shown, "n": figure["n"]}


def _rank_shown(leaderboard: dict) -> str:
    """The rank correlation with its interval and the number of sources ranked, or, where
    the interval rests on too few values (`rests_on_few_values`), without it and why."""
    rank = leaderboard.get("rank_correlation")
    if not rank or rank.get("spearman") is None:
        return _("not enough data")
    sources = rank.get("sources", leaderboard.get("sources"))
    if rests_on_few_values(rank, sources):
        return _(
            "%(point)s (no interval: a rank correlation of %(n)s sources takes too few "
            "values for the bootstrap's percentiles)"
        ) % {"point": rounded_number(rank["spearman"], 2), "n": sources}
    return _with_basis({**rank, "rate": rank["spearman"], "n": sources})


@dataclass(frozen=True)
class FigureLine:
    label: str
    judge: str
    humans: str


def figure_lines(figures: dict) -> list[FigureLine]:
    biases = figures["biases"]
    position, length, own = biases["position"], biases["length"], biases["self_preference"]
    lines = [
        FigureLine(
            _("Left answer preferred"),
            _with_basis(position["judge"]),
            _with_basis(position["humans"]),
        ),
        FigureLine(
            _("Same side preferred in both orders"),
            _with_basis(position["judge_same_side_both_orders"]),
            "",
        ),
        FigureLine(
            _("Longer answer preferred"),
            _with_basis(length["judge_longer_preferred"]),
            _with_basis(length["humans_longer_preferred"]),
        ),
        FigureLine(
            _("Score difference per 100 characters"),
            _with_basis(length["judge_slope"], "slope"),
            _with_basis(length["humans_slope"], "slope"),
        ),
    ]
    if "judge" in own:
        lines.append(
            FigureLine(
                _("Own model family (%(source)s) preferred") % {"source": own["source"]},
                _with_basis(own["judge"]),
                _with_basis(own["humans"]),
            )
        )
    correlation = figures["agreement"]["overall"]["correlation"]
    lines.append(
        FigureLine(_("Correlation with the humans' mean score"), _with_basis(correlation, "r"), "")
    )
    extra = figures["agreement"]["overall"].get("extra_fan", {})
    lines.append(
        FigureLine(
            _("Distance to a fan, minus a fan's distance to another fan"),
            _shown({**extra, "rate": extra.get("difference")}),
            "",
        )
    )
    lines.append(
        FigureLine(
            _("Rank correlation of the leaderboards"), _rank_shown(figures["leaderboard"]), ""
        )
    )
    headline = figures["headline"]
    if headline.get("holds") is not None:
        agreeing = _("%(agreeing)d of %(compared)d verdicts agree") % {
            "agreeing": headline["verdicts_agreeing"],
            "compared": headline["verdicts_compared"],
        }
    else:
        agreeing = _("not enough data")
    lines.append(
        FigureLine(_("Headline (sources beating the reference) under the judge"), agreeing, "")
    )
    return lines


@dataclass(frozen=True)
class AlphaLine:
    metric: str
    humans: str
    with_judge: str


def alpha_lines(figures: dict, labels: dict[str, str]) -> list[AlphaLine]:
    lines = []
    for slug, found in figures["agreement"].items():
        alpha = found.get("alpha")
        if alpha is None:
            continue
        metric = labels.get(slug, slug)
        if not alpha.get("humans"):
            lines.append(AlphaLine(metric, _("not enough data"), _("not enough data")))
            continue
        lines.append(
            AlphaLine(
                metric,
                _shown({**alpha["humans"], "rate": alpha["humans"]["alpha"]}),
                _shown({**alpha["with_judge"], "rate": alpha["with_judge"]["alpha"]}),
            )
        )
    return lines


@dataclass(frozen=True)
class StyleLine:
    source: str
    metric: str
    humans: str
    humans_adjusted: str
    judge: str
    judge_adjusted: str


def _adjusted(figure: dict) -> str:
    return _shown(
        {
            "rate": figure.get("adjusted"),
            "ci_low": figure.get("adjusted_ci_low"),
            "ci_high": figure.get("adjusted_ci_high"),
        }
    )


def style_lines(figures: dict, labels: dict[str, str]) -> list[StyleLine]:
    return [
        StyleLine(
            row["source"],
            labels.get(row["metric"], row["metric"]),
            _shown({**row["humans"], "rate": row["humans"].get("difference")}),
            _adjusted(row["humans"]),
            _shown({**row["judge"], "rate": row["judge"].get("difference")}),
            _adjusted(row["judge"]),
        )
        for row in figures.get("style", {}).get("rows", [])
    ]


@dataclass
class ShownRun:
    run: JudgeRun
    lines: list[FigureLine]
    alphas: list[AlphaLine]
    methods: str
    styles: list[StyleLine]


def _study_slug_of_page(request) -> str | None:
    match = getattr(request, "resolver_match", None)
    return match.kwargs.get("slug") if match else None


def judge_runs_of_page(request) -> list[ShownRun]:
    """The judge runs with stored figures of the study whose page is shown."""
    from annotation.models import Study

    study = Study.objects.filter(slug=_study_slug_of_page(request) or "").first()
    if study is None:
        return []
    labels = {m.slug: str(m.label) for m in metrics_of_pairs()}
    return [
        ShownRun(
            run,
            figure_lines(run.figures["figures"]),
            alpha_lines(run.figures["figures"], labels),
            judge_methods_text(
                run.figures, "zh" if (get_language() or "").startswith("zh") else "en"
            ),
            style_lines(run.figures["figures"], labels),
        )
        for run in runs_of_study(study)
        if run.figures
    ]


def judge_progress_of_page(request) -> list[tuple[JudgeRun, object]]:
    """Every judge run of the study whose staff page is shown, with its progress."""
    from annotation.models import Study

    study = Study.objects.filter(slug=_study_slug_of_page(request) or "").first()
    if study is None:
        return []
    return [(run, run_progress(run)) for run in runs_of_study(study)]
