"""A study's whole results document computed from its inputs alone: the workers build the
inputs from the database (`annotation.results`), `reproduce` from an export snapshot."""

from dataclasses import dataclass, field

import numpy as np

from .figures import (
    agreement,
    agreement_tables,
    diversity,
    leaderboard,
    leaderboard_rows,
    paired_differences,
    with_reference,
)
from .preferences import preferences
from .rules import Rules
from .style import style_adjusted_differences


@dataclass(frozen=True)
class MetricInfo:
    """What the figures need of a metric (a Metric row, or a snapshot's description)."""

    pk: int
    slug: str
    dimension: str
    label_zh: str = ""
    label_en: str = ""


@dataclass(frozen=True)
class SourceInfo:
    slug: str
    kind: str
    display_name: str = ""


@dataclass
class StudyInputs:
    """Everything the study's figures are computed from, with no database behind it:
    the counted ratings (COLUMNS), the metrics in display order, the sources by id, the
    reference source, the dimensions, and one row per counted pair judgment for the preferences:
    (character, scenario, preferred source or None, is tie, guessed source or None,
    guess asked, left source, right source, annotator pseudonym)."""

    data: dict
    metrics: list
    sources: dict
    reference_source: int | None
    preference_rows: list
    judgments: int
    # The dimensions a leaderboard averages over, in display order (not `overall`).
    dimensions: list
    # Answer id -> (length in characters, emoji and kaomoji) of the answers in pairs.
    answer_styles: dict = field(default_factory=dict)


def study_figures(inputs: StudyInputs, rules: Rules) -> dict:
    """Every figure of the results document from the study's inputs alone: the same
    function serves the workers and `reproduce`, which rebuilds the inputs from an
    export snapshot."""
    data, sources = inputs.data, inputs.sources
    metric_by_id = {m.pk: m for m in inputs.metrics}
    rated_sources = set(np.unique(data["source"]).tolist())
    payload = {
        "judgments": inputs.judgments,
        "statistics": rules.describe(),
        "metrics": [
            {
                "slug": m.slug,
                "label_zh": m.label_zh,
                "label_en": m.label_en,
                "dimension": m.dimension,
            }
            for m in inputs.metrics
        ],
        "sources": {
            s.slug: {"display_name": s.display_name, "kind": s.kind}
            for pk, s in sources.items()
            if pk in rated_sources
        },
    }
    # Every scope (the study, each round, each character) is a selection of units or
    # rows prepared once, not another pass over the ratings.
    tables, unit_scope = agreement_tables(data, metric_by_id)
    study_annotators = len(np.unique(data["annotator"]))
    payload["agreement"] = agreement(tables, unit_scope, metric_by_id, rules, study_annotators)
    payload["agreement_by_round"] = {
        str(r): agreement(tables, unit_scope, metric_by_id, None, 0, unit_scope["round"] == r)
        for r in (1, 2)
    }
    characters = np.unique(data["character"]).tolist()
    payload["agreement_by_character"] = {
        str(c): agreement(tables, unit_scope, metric_by_id, None, 0, unit_scope["character"] == c)
        for c in characters
    }
    rows = leaderboard_rows(data, metric_by_id, inputs.dimensions)
    payload["leaderboard"] = leaderboard(rows, sources, rules)
    payload["leaderboard_by_round"] = {
        str(r): leaderboard(rows, sources, rules, selected=rows["round"] == r) for r in (1, 2)
    }
    payload["leaderboard_by_character"] = {
        str(c): leaderboard(rows, sources, rules, selected=rows["character"] == c)
        for c in characters
    }
    payload["diversity"] = diversity(data, sources, rules)
    # Each compared rating matched with the reference's, once for both families.
    paired = with_reference(inputs.reference_source, data)
    payload["paired_differences"] = paired_differences(paired, metric_by_id, sources, rules)
    payload["style_adjusted_differences"] = style_adjusted_differences(
        paired, metric_by_id, sources, inputs.answer_styles, rules
    )
    payload.update(preferences(inputs.preference_rows, inputs.reference_source, sources, rules))
    return payload
