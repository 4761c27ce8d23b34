"""The results page: which studies have results, one study's figures as the page shows
them, and the reader's recent export jobs."""

import logging
from dataclasses import dataclass, field

from dialogues.selectors import source_shown_name

from ..models import (
    ExportJob,
    Metric,
    localized,
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
    rounds: list = field(default_factory=list)  # the study's rounds, for the filter
    filters: dict = field(default_factory=dict)  # the filters the figures are for
    # Filter values the study does not have, by filter: set aside, and the page says so.
    unknown_filters: dict = field(default_factory=dict)
    # A round asked for beside a character, set aside: the results hold no figures for one
    # character in one round (`ScopedFilters`). The character's name, for the notice.
    round_set_aside: str = ""
    character_name: str = ""
    # Filtered to a selection that has no judgments: no figures to show.
    empty_selection: bool = False
    # Filtered to a character or a round: only the leaderboard, charts and agreement are
    # the selection's; the sections below them stay the whole study's, and say so.
    scoped: bool = False
    sorted_by: str = ""  # the dimension whose mean orders the leaderboard
    chart: dict = field(default_factory=dict)
    has_intervals: bool = True
    statistics: dict = field(default_factory=dict)


def leaderboard_dimensions() -> list[str]:
    """The dimensions a leaderboard averages over (`overall` holds diversity alone)."""
    from ..models import Dimension

    return [d for d in Dimension.values if d != Dimension.OVERALL]


@dataclass
class ScopedFilters:
    """The page's filters checked against the study, and the subset of the results
    document the figures come from (`scope`). The document holds figures for the whole
    study, each round and each character, not for one character in one round: a round
    beside a character is kept where one of the two narrows nothing (the study has one
    round, or one character), and set aside otherwise (`round_set_aside`)."""

    character: str = ""
    round: str = ""
    dimension: str = ""
    unknown: dict = field(default_factory=dict)  # filter -> a value the study does not have
    round_set_aside: str = ""
    scope: tuple[str, str] | None = None  # ("character", id), ("round", number) or None


def scoped_filters(
    *, characters: list[str], rounds: list[str], character=None, round_=None, dimension=None
) -> ScopedFilters:
    """`character`, `round_` and `dimension` as asked for (strings or None), checked
    against the study's `characters` (ids as strings) and `rounds`."""
    checked = ScopedFilters()
    for name, value, known in (
        ("character", character, characters),
        ("round", round_, rounds),
        ("dimension", dimension, leaderboard_dimensions()),
    ):
        if not value:
            continue
        if value in known:
            setattr(checked, name, value)
        else:
            checked.unknown[name] = value[:40]
    if checked.character and checked.round and len(rounds) > 1 and len(characters) > 1:
        checked.round_set_aside, checked.round = checked.round, ""
    if checked.character and not (checked.round and len(rounds) > 1):
        # A round kept beside it is the study's only one: the character's figures are exact.
        checked.scope = ("character", checked.character)
    elif checked.round:
        # A character kept beside it is the study's only one.
        checked.scope = ("round", checked.round)
    return checked


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
    study_characters = list(Character.objects.filter(pk__in=study.characters.all()).order_by("pk"))
    study_rounds = sorted(int(r) for r in study.rounds)
    filters = scoped_filters(
        characters=[str(c.pk) for c in study_characters],
        rounds=[str(r) for r in study_rounds],
        character=character,
        round_=round_,
        dimension=dimension,
    )
    dimension = filters.dimension
    metrics = list(Metric.objects.filter(for_diversity=False).order_by("position"))
    if dimension:
        metrics = [m for m in metrics if m.dimension == dimension]
    dimensions = [dimension] if dimension else leaderboard_dimensions()
    dimension_labels = dict(Dimension.choices)
    columns = [(m.slug, m.label) for m in metrics] + [
        (f"dimension:{d}", str(dimension_labels[d])) for d in dimensions
    ]

    board, agreement, has_intervals = (
        document["leaderboard"],
        document["agreement"],
        True,
    )
    scope = filters.scope
    if scope is not None:
        kind, key = scope
        if kind == "character":
            board = document["leaderboard_by_character"].get(key, {})
            agreement = document["agreement_by_character"].get(key, {})
        else:
            board = document["leaderboard_by_round"].get(key, {})
            agreement = document["agreement_by_round"].get(key, {})
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
        filters={
            "character": filters.character,
            "round": filters.round,
            "dimension": filters.dimension,
        },
        characters=study_characters,
        rounds=study_rounds,
        unknown_filters=filters.unknown,
        round_set_aside=filters.round_set_aside,
        character_name=next(
            (c.shown_name for c in study_characters if str(c.pk) == filters.character), ""
        ),
        empty_selection=scope is not None and not board and not agreement,
        scoped=scope is not None,
    )
    if view.empty_selection or not view.judgments:
        return view  # nothing to show: the page says so instead of empty tables
    # Ranked by emotional support, the task's aim, or by the dimension the page is
    # filtered to: never by a column the page does not show.
    ranking = dimension or "emotional_support"
    view.sorted_by = str(dimension_labels[ranking])
    order = sorted(
        board,
        key=lambda slug: -(board[slug].get(f"dimension:{ranking}", {}).get("mean") or 0),
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
    # Diversity sets belong to no round: a character's figures within a round leave them out.
    in_a_round = bool(filters.round)
    if diversity_metric and diversity_metric.slug in agreement and not in_a_round:
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
        "axisLabel": localized("平均评分（1–5）", "Mean rating (1–5)"),
        "ciLabel": _dimension_chart_caption(
            board.get(slug, {}).get(key, {}) for slug in order for key in dimension_keys
        ),
    }
    return view


def _dimension_chart_caption(figures) -> str:
    """The bar chart's caption: what its whiskers are, or, when no bar has an interval (too
    few annotators or cells), that none could be drawn, so that it never names whiskers
    the reader cannot find."""
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
