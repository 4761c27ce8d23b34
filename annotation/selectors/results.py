"""The results page: which studies have results, one study's figures as the page shows
them, and the reader's recent export jobs."""

import logging
from dataclasses import dataclass, field

from dialogues.selectors import source_shown_name

from ..models import (
    ExportJob,
    Metric,
)
from ..results.schema import ResultsSchemaError, read_document

logger = logging.getLogger(__name__)


def studies_with_results():
    from ..models import Study

    return Study.objects.select_related("results").order_by("-created_at")


@dataclass
class Cell:
    mean: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    annotators: int = 0
    cells: int = 0
    # False when the estimate rests on too few judgments or annotators for an interval.
    enough_data: bool = True


@dataclass
class ResultsView:
    """The results page's data, already filtered, in display order."""

    computed_at: object = None
    judgments: int = 0
    seconds: float = 0
    columns: list = field(default_factory=list)  # (key, label)
    rows: list = field(default_factory=list)  # (source, display_name, kind, [Cell per column])
    agreement: list = field(default_factory=list)  # (label, figures)
    paired: list = field(default_factory=list)  # (source, [Cell per metric])
    # (source, mean length difference in characters, [figures or None per metric])
    style_adjusted: list = field(default_factory=list)
    preferences: list = field(default_factory=list)
    strengths: list = field(default_factory=list)
    strengths_note: str = ""  # why there are no strengths (`bradley_terry_note`)
    diversity: list = field(default_factory=list)
    human_guess: list = field(default_factory=list)
    position_bias: dict = field(default_factory=dict)
    annotators: list = field(default_factory=list)
    characters: list = field(default_factory=list)
    filters: dict = field(default_factory=dict)
    chart: dict = field(default_factory=dict)
    has_intervals: bool = True
    statistics: dict = field(default_factory=dict)


def results_view(study, *, character=None, round_=None, dimension=None) -> ResultsView | None:
    from dialogues.models import Character

    from ..models import Dimension, StudyResults

    results = StudyResults.objects.filter(study=study).first()
    if results is None:
        return None
    try:
        document = read_document(results.payload)
    except ResultsSchemaError:
        # Shown as "not computed yet": the next recompute writes a document we can read.
        logger.warning("results of study %s cannot be read", study.pk, exc_info=True)
        return None
    metrics = list(Metric.objects.filter(for_diversity=False).order_by("position"))
    if dimension in Dimension.values:
        metrics = [m for m in metrics if m.dimension == dimension]
    dimensions = [d for d in Dimension.values if d != Dimension.OVERALL]
    if dimension in dimensions:
        dimensions = [dimension]
    dimension_labels = dict(Dimension.choices)
    columns = [(m.slug, m.label) for m in metrics] + [
        (f"dimension:{d}", str(dimension_labels[d])) for d in dimensions
    ]

    board, agreement, has_intervals = (
        document["leaderboard"],
        document["agreement"],
        True,
    )
    if character:
        board = document["leaderboard_by_character"].get(str(character), {})
        agreement = document["agreement_by_character"].get(str(character), {})
        has_intervals = bool(document["statistics"])
    elif round_ in ("1", "2"):
        board = document["leaderboard_by_round"].get(round_, {})
        agreement = document["agreement_by_round"].get(round_, {})
        # Results computed before every subset got its own intervals have none.
        has_intervals = bool(document["statistics"])

    sources = document["sources"]
    view = ResultsView(
        computed_at=results.computed_at,
        judgments=results.judgments,
        seconds=results.seconds,
        columns=columns,
        has_intervals=has_intervals,
        statistics=document["statistics"],
        filters={"character": character or "", "round": round_ or "", "dimension": dimension or ""},
        characters=list(Character.objects.filter(pk__in=study.characters.all()).order_by("pk")),
    )
    order = sorted(
        board,
        key=lambda slug: -(board[slug].get("dimension:emotional_support", {}).get("mean") or 0),
    )

    def name(slug: str) -> str:
        return source_shown_name(sources.get(slug, {}).get("display_name", slug))

    for slug in order:
        cells = [Cell(**board[slug].get(key, {"mean": None})) for key, _label in columns]
        view.rows.append((slug, name(slug), sources.get(slug, {}).get("kind", ""), cells))
    for metric in metrics:
        figures = agreement.get(metric.slug)
        if figures:
            view.agreement.append((metric.label, figures))
    diversity_metric = Metric.objects.filter(for_diversity=True).first()
    if diversity_metric and diversity_metric.slug in agreement:
        view.agreement.append((diversity_metric.label, agreement[diversity_metric.slug]))
    for slug, per_metric in document["paired_differences"].items():
        view.paired.append(
            (name(slug), [Cell(**per_metric.get(m.slug, {"mean": None})) for m in metrics])
        )
    for slug, per_metric in document["style_adjusted_differences"].items():
        lengths = [f["mean_length_difference"] for f in per_metric.values()]
        view.style_adjusted.append(
            (name(slug), lengths[0] if lengths else None, [per_metric.get(m.slug) for m in metrics])
        )
    for slug, figures in sorted(
        document["preferences"].items(), key=lambda kv: -(kv[1]["win_rate"] or 0)
    ):
        view.preferences.append((name(slug), figures))
    for slug, figures in sorted(
        document["bradley_terry"].items(), key=lambda kv: -(kv[1]["log_strength"] or -99)
    ):
        view.strengths.append((name(slug), figures))
    view.strengths_note = document["bradley_terry_note"]
    for slug, figures in sorted(
        document["diversity"].items(), key=lambda kv: -(kv[1]["mean"] or 0)
    ):
        view.diversity.append((name(slug), Cell(**figures)))
    for slug, figures in sorted(
        document["human_guess"].items(), key=lambda kv: -(kv[1]["rate"] or 0)
    ):
        view.human_guess.append((name(slug), figures))
    view.position_bias = document["position_bias"].get("overall", {})
    view.annotators = sorted(document["annotators"].items(), key=lambda kv: -kv[1]["judgments"])
    dimension_keys = [f"dimension:{d}" for d in dimensions]
    view.chart = {
        "metrics": [m.label for m in metrics],
        "metricKeys": [m.slug for m in metrics],
        "dimensions": [str(dimension_labels[d]) for d in dimensions],
        "dimensionKeys": dimension_keys,
        "sources": [
            {
                "slug": slug,
                "label": name(slug),
                "values": {key: board[slug].get(key, {}) for key, _label in columns},
            }
            for slug in order
        ],
        "ciLabel": _dimension_chart_caption(
            board.get(slug, {}).get(key, {}) for slug in order for key in dimension_keys
        ),
    }
    return view


def _dimension_chart_caption(figures) -> str:
    """The bar chart's caption: what its whiskers are, or, when no bar has an interval (too
    few annotators or cells), that none could be drawn, so that it never names whiskers
    the reader cannot find."""
    from ..models import localized

    if any(figure.get("ci_low") is not None for figure in figures):
        return localized("须线：95% 置信区间", "Whiskers: 95% CI")
    return localized("数据不足，未画置信区间", "Not enough data for confidence intervals")


def export_jobs_of(user, study, limit: int = 5) -> list[ExportJob]:
    """The user's latest export jobs for the study, newest first."""
    return list(
        ExportJob.objects.filter(requested_by=user, study=study).order_by("-created_at", "-pk")[
            :limit
        ]
    )
