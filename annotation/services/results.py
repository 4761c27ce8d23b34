"""Recomputing a study's derived results from its judgments.

Reads the ratings of non-excluded judgments of non-gold items as flat integer arrays
(one query), hands them to the pure functions in `annotation.stats`, and replaces the
study's StudyResults row. Idempotent: the same judgments give the same document.
"""

import math
import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from dialogues.models import Source

from ..exports.rows import seconds_value
from ..models import (
    COUNTED_JUDGMENT_SQL,
    AnnotatorProfile,
    Dimension,
    GoldCheck,
    ItemKind,
    Judgment,
    Metric,
    QualityFlag,
    Study,
    StudyResults,
)
from ..stats.agreement import (
    counts_from_ratings,
    icc_1k,
    krippendorff_alpha,
    patterns,
    within_one,
)
from ..stats.clustered import alpha_two_way
from ..stats.estimates import bradley_terry_estimates
from ..stats.intervals import (
    clustered_proportions,
    enough_information,
    two_way_cluster_means,
)
from .quality import deviations_of, low_agreement_flags

VALUES = [1, 2, 3, 4, 5]

RATINGS_SQL = """
SELECT r.value, r.metric_id, j.id, j.annotator_id, i.id, i.character_id,
       COALESCE(i.scenario_id, 0), COALESCE(i.round, 0),
       CASE WHEN i.kind = 'pair' THEN 1 ELSE 0 END,
       COALESCE(a.source_id, slot.source_id), COALESCE(r.answer_id, 0)
FROM annotation_rating r
JOIN annotation_judgment j ON j.id = r.judgment_id
JOIN annotation_item i ON i.id = j.item_id
LEFT JOIN dialogues_answer a ON a.id = r.answer_id
LEFT JOIN (
    SELECT ia.item_id, MIN(da.source_id) AS source_id
    FROM annotation_itemanswer ia
    JOIN dialogues_answer da ON da.id = ia.answer_id
    JOIN annotation_item di ON di.id = ia.item_id AND di.study_id = {study} AND di.kind = 'diversity'
    GROUP BY ia.item_id
) slot ON slot.item_id = i.id AND r.answer_id IS NULL
WHERE i.study_id = {study} AND {counted}
"""
COLUMNS = [
    "value",
    "metric",
    "judgment",
    "annotator",
    "item",
    "character",
    "scenario",
    "round",
    "is_pair",
    "source",
    "answer",
]


def _clean(value):
    """JSON has no NaN: undefined figures become null."""
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 6)
    if isinstance(value, np.integer):
        return int(value)
    return value


def load_ratings(study: Study) -> dict[str, np.ndarray]:
    """Every counted rating of the study as parallel integer arrays (COLUMNS)."""
    if connection.vendor == "postgresql":
        return _load_ratings_binary(study)
    return load_ratings_rows(study)


def load_ratings_rows(study: Study) -> dict[str, np.ndarray]:
    """The plain way: one row of COLUMNS per rating. Any database."""
    with connection.cursor() as cursor:
        cursor.execute(RATINGS_SQL.format(study=int(study.pk), counted=COUNTED_JUDGMENT_SQL))
        flat = np.array(cursor.fetchall(), dtype=np.int64).ravel()
    table = flat.reshape(-1, len(COLUMNS))
    return {name: table[:, i] for i, name in enumerate(COLUMNS)}


# On PostgreSQL, moving 1.3 million rows of eleven numbers as text is most of the cost of a
# recompute. So only what varies per rating crosses the wire, packed by the server into one
# binary value (16 bytes a rating, read by numpy without a Python loop: a COPY would hand
# Python one block per row); what a rating shares with its judgment, item and answer comes
# in three small queries and is spread by indexing.
PACKED_RATINGS_SQL = f"""
SELECT string_agg(
    int8send(r.judgment_id) || int4send(COALESCE(r.answer_id, 0)::int4)
    || int4send((r.metric_id * 8 + r.value)::int4),
    ''::bytea)
FROM annotation_rating r
JOIN annotation_judgment j ON j.id = r.judgment_id
JOIN annotation_item i ON i.id = j.item_id
WHERE i.study_id = %s AND {COUNTED_JUDGMENT_SQL}
"""
_PACKED_RATING = np.dtype([("judgment", ">i8"), ("answer", ">i4"), ("metric_value", ">i4")])
JUDGMENTS_SQL = f"""
SELECT j.id, j.annotator_id, j.item_id
FROM annotation_judgment j JOIN annotation_item i ON i.id = j.item_id
WHERE i.study_id = %s AND {COUNTED_JUDGMENT_SQL}
"""
ITEMS_SQL = """
SELECT i.id, i.character_id, COALESCE(i.scenario_id, 0), COALESCE(i.round, 0),
       CASE WHEN i.kind = 'pair' THEN 1 ELSE 0 END, COALESCE(MIN(da.source_id), 0)
FROM annotation_item i
LEFT JOIN annotation_itemanswer ia ON ia.item_id = i.id AND i.kind = 'diversity'
LEFT JOIN dialogues_answer da ON da.id = ia.answer_id
WHERE i.study_id = %s AND NOT i.is_gold
GROUP BY i.id
"""


def _row_of(ids: np.ndarray) -> np.ndarray:
    """A table from id to its row in `ids` (ids are dense enough for a flat array)."""
    table = np.zeros(int(ids.max(initial=0)) + 1, dtype=np.int64)
    table[ids] = np.arange(len(ids))
    return table


def _load_ratings_binary(study: Study) -> dict[str, np.ndarray]:
    with connection.cursor() as cursor:
        cursor.execute(PACKED_RATINGS_SQL, [study.pk])
        raw = bytes(cursor.fetchone()[0] or b"")
        cursor.execute(JUDGMENTS_SQL, [study.pk])
        judgments = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 3)
        cursor.execute(ITEMS_SQL, [study.pk])
        items = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 6)
        cursor.execute("SELECT id, source_id FROM dialogues_answer")
        answers = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 2)
    rows = np.frombuffer(raw, dtype=_PACKED_RATING)
    judgment = rows["judgment"].astype(np.int64)
    answer = rows["answer"].astype(np.int64)
    metric_value = rows["metric_value"].astype(np.int64)
    judgment_row = judgments[_row_of(judgments[:, 0])[judgment]]
    item = judgment_row[:, 2]
    item_row = items[_row_of(items[:, 0])[item]]
    answer_source = answers[_row_of(answers[:, 0])[answer], 1]
    return {
        "value": metric_value % 8,
        "metric": metric_value // 8,
        "judgment": judgment,
        "annotator": judgment_row[:, 1],
        "item": item,
        "character": item_row[:, 1],
        "scenario": item_row[:, 2],
        "round": item_row[:, 3],
        "is_pair": item_row[:, 4],
        # A diversity rating names no answer: its source is the set's.
        "source": np.where(answer > 0, answer_source, item_row[:, 5]),
        "answer": answer,
    }


def _index(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, 0-based index of each element). Ids and small keys go through a
    lookup table (linear time); large composite keys through a sort."""
    values = np.asarray(values)
    if len(values) and values.min() >= 0 and values.max() < 10_000_000:
        present = np.flatnonzero(np.bincount(values))
        lookup = np.zeros(int(values.max()) + 1, dtype=np.int64)
        lookup[present] = np.arange(len(present))
        return present, lookup[values]
    distinct, inverse = np.unique(values, return_inverse=True)
    return distinct, inverse.ravel()


def study_recompute(*, study: Study) -> StudyResults:
    """Everything the workers derive from a study, from one read of its ratings."""
    data = load_ratings(study)
    # Computed once: the flags and the annotators' quality figures both use them.
    deviations = deviations_of(data)
    low_agreement_flags(study=study, deviations=deviations)
    return results_refresh(study=study, data=data, deviations=deviations)


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


@dataclass(frozen=True)
class Rules:
    """How intervals are made: bootstrap draws and seed, and the minimum information
    below which an estimate gets no interval."""

    draws: int
    seed: int
    min_judgments: int
    min_annotators: int
    confidence: float = 0.95

    @classmethod
    def from_settings(cls) -> "Rules":
        return cls(
            draws=settings.CHATANIME_BOOTSTRAP_DRAWS,
            seed=settings.CHATANIME_BOOTSTRAP_SEED,
            min_judgments=settings.CHATANIME_MIN_JUDGMENTS,
            min_annotators=settings.CHATANIME_MIN_ANNOTATORS,
        )

    def describe(self) -> dict:
        return {
            "bootstrap_draws": self.draws,
            "seed": self.seed,
            "confidence": self.confidence,
            "min_judgments": self.min_judgments,
            "min_annotators": self.min_annotators,
            "methods": METHODS,
        }


# Named in the results document so that a reader knows what each interval is.
METHODS = {
    "leaderboard": "two-way cluster-robust t interval (cells, annotators)",
    "paired_differences": "two-way cluster-robust t interval (cells, annotators)",
    "diversity": "two-way cluster-robust t interval (sets, annotators)",
    "agreement": "two-way cluster-robust t interval (cells, annotators), jackknife variances",
    "bradley_terry": "two-way cluster-robust sandwich t interval (cells, annotators)",
    "proportions": "Wilson interval on the design-effect-adjusted sample size",
}


@dataclass
class StudyInputs:
    """Everything the study's figures are computed from, with no database behind it:
    the counted ratings (COLUMNS), the metrics in display order, the sources by id, the
    reference source, and one row per counted pair judgment for the preferences:
    (character, scenario, preferred source or None, is tie, guessed source or None,
    guess asked, left source, right source, annotator pseudonym)."""

    data: dict
    metrics: list
    sources: dict
    reference_source: int | None
    preference_rows: list
    judgments: int


def study_inputs(study: Study, data=None) -> StudyInputs:
    metrics = [
        MetricInfo(m.pk, m.slug, m.dimension, m.label_zh, m.label_en)
        for m in Metric.objects.order_by("position")
    ]
    sources = {s.pk: SourceInfo(s.slug, s.kind, s.display_name) for s in Source.objects.all()}
    judgments = Judgment.objects.filter(item__study=study).counted()
    rows = list(
        judgments.filter(item__kind=ItemKind.PAIR).values_list(
            "item__character_id",
            "item__scenario_id",
            "preferred_answer__source_id",
            "is_tie",
            "human_guess__source_id",
            "human_guess_asked",
            "assignment__left_source_id",
            "assignment__right_source_id",
            "annotator__annotator_profile__pseudonym",
        )
    )
    return StudyInputs(
        data=data if data is not None else load_ratings(study),
        metrics=metrics,
        sources=sources,
        reference_source=study.reference_source_id,
        preference_rows=rows,
        judgments=judgments.count(),
    )


def results_refresh(*, study: Study, data=None, deviations=None) -> StudyResults:
    started = time.perf_counter()
    inputs = study_inputs(study, data)
    payload = {"study": study.slug, **study_figures(inputs, Rules.from_settings())}
    payload["annotators"] = _annotator_quality(
        study, deviations if deviations is not None else deviations_of(inputs.data)
    )
    payload["software"] = _software()
    payload["seconds"] = round(time.perf_counter() - started, 3)

    with transaction.atomic():
        results, _created = StudyResults.objects.update_or_create(
            study=study,
            defaults={
                "computed_at": timezone.now(),
                "judgments": payload["judgments"],
                "seconds": payload["seconds"],
                "payload": payload,
            },
        )
    return results


def _software() -> dict:
    from ..exports import software_version

    return software_version()


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
    tables, unit_scope = _agreement_tables(data, metric_by_id)
    study_annotators = len(np.unique(data["annotator"]))
    payload["agreement"] = _agreement(tables, unit_scope, metric_by_id, rules, study_annotators)
    payload["agreement_by_round"] = {
        str(r): _agreement(tables, unit_scope, metric_by_id, None, 0, unit_scope["round"] == r)
        for r in (1, 2)
    }
    characters = np.unique(data["character"]).tolist()
    payload["agreement_by_character"] = {
        str(c): _agreement(tables, unit_scope, metric_by_id, None, 0, unit_scope["character"] == c)
        for c in characters
    }
    rows = _leaderboard_rows(data, metric_by_id)
    payload["leaderboard"] = _leaderboard(rows, sources, rules)
    payload["leaderboard_by_round"] = {
        str(r): _leaderboard(rows, sources, rules, selected=rows["round"] == r) for r in (1, 2)
    }
    payload["leaderboard_by_character"] = {
        str(c): _leaderboard(rows, sources, rules, selected=rows["character"] == c)
        for c in characters
    }
    payload["diversity"] = _diversity(data, sources, rules)
    payload["paired_differences"] = _paired_differences(
        inputs.reference_source, data, metric_by_id, sources, rules
    )
    payload.update(_preferences(inputs.preference_rows, inputs.reference_source, sources, rules))
    return payload


def _subset(data, mask):
    if mask.all():
        return data
    return {name: column[mask] for name, column in data.items()}


def _agreement_tables(data, metric_by_id) -> tuple[dict, dict]:
    """A units x values count table per metric over the whole study, and each unit's
    character, round and cell. The unit is one answer within one item (for diversity,
    the item); a unit's row is all zeros for a metric it has no ratings on."""
    unit_ids, unit = _index(data["item"] * 1_000_000_000 + data["answer"])
    unit_scope = {}
    for column in ("character", "round"):
        unit_scope[column] = np.zeros(len(unit_ids), dtype=np.int64)
        unit_scope[column][unit] = data[column]
    cells = _cells(data)
    unit_scope["cell"] = np.zeros(len(unit_ids), dtype=np.int64)
    unit_scope["cell"][unit] = cells
    tables = {}
    unit_scope["ratings"] = {}  # per metric: (unit, value index, annotator, cell) per rating
    for metric_id in metric_by_id:
        mask = data["metric"] == metric_id
        if mask.any():
            tables[metric_id] = counts_from_ratings(
                unit[mask], data["value"][mask] - 1, len(VALUES), n_units=len(unit_ids)
            )
            unit_scope["ratings"][metric_id] = (
                unit[mask],
                data["value"][mask] - 1,
                data["annotator"][mask],
                cells[mask],
            )
    return tables, unit_scope


def _agreement(tables, unit_scope, metric_by_id, rules, annotators: int, units=None) -> dict:
    """Per metric, over all units or the selected ones (a boolean mask over units); with
    an interval when `rules` are given and the minimum information is there."""
    out = {}
    for metric_id, table in tables.items():
        counts = table if units is None else table[units]
        if not counts.any():
            continue
        # The distinct count patterns, found once for every figure below.
        reduced = patterns(counts)
        n_items = int(reduced[1].sum())
        row = {
            "alpha_ordinal": _clean(krippendorff_alpha(counts, VALUES, "ordinal", reduced=reduced)),
            "alpha_interval": _clean(
                krippendorff_alpha(counts, VALUES, "interval", reduced=reduced)
            ),
            "ci_low": None,
            "ci_high": None,
            "icc_1k": _clean(icc_1k(counts, VALUES, reduced=reduced)),
            "within_one": _clean(within_one(counts, VALUES, reduced=reduced)),
            "n_items": n_items,
        }
        if rules is not None:
            enough = bool(
                enough_information(
                    n_items,
                    annotators,
                    min_judgments=rules.min_judgments,
                    min_annotators=rules.min_annotators,
                )
            )
            row["enough_data"] = enough
            if enough and units is None:
                estimate = alpha_two_way(
                    *unit_scope["ratings"][metric_id],
                    VALUES,
                    "ordinal",
                    confidence=rules.confidence,
                )
                row["ci_low"] = _clean(estimate.ci_low)
                row["ci_high"] = _clean(estimate.ci_high)
        out[metric_by_id[metric_id].slug] = row
    return out


def _cells(data) -> np.ndarray:
    """Clusters: the (character, scenario) cell of a pair; a diversity item is its own
    cell."""
    return np.where(
        data["is_pair"] == 1, data["character"] * 1000 + data["scenario"], -data["item"]
    )


# What each leaderboard row carries over from its rating.
RATING_COLUMNS = ("source", "annotator", "character", "round")


def _leaderboard_rows(data, metric_by_id) -> dict:
    """What a leaderboard averages: every pair rating under its metric's label, plus one
    row per (judgment, answer, dimension) under the dimension's label holding that
    judgment's mean over the dimension's metrics. Parallel arrays, and the labels."""
    pair = data["is_pair"] == 1
    d = _subset(data, pair)
    metric_ids = list(metric_by_id)
    dimensions = [dim for dim in Dimension.values if dim != Dimension.OVERALL]
    labels = [metric_by_id[m].slug for m in metric_ids] + [f"dimension:{dim}" for dim in dimensions]
    if not pair.any():  # only diversity sets judged so far (they come first)
        empty = {name: np.zeros(0, dtype=np.int64) for name in (*RATING_COLUMNS, "cell", "label")}
        return {**empty, "value": np.zeros(0), "labels": labels}
    # Lookup tables indexed by metric id, so that no Python loop runs per rating.
    slot_of = np.full(max(metric_ids) + 1, -1)
    dimension_of = np.full(max(metric_ids) + 1, -1)
    for position, metric_id in enumerate(metric_ids):
        slot_of[metric_id] = position
        dimension = metric_by_id[metric_id].dimension
        dimension_of[metric_id] = dimensions.index(dimension) if dimension in dimensions else -1
    metric_slot = slot_of[d["metric"]]
    dim_index = dimension_of[d["metric"]]

    keep = dim_index >= 0
    dim_key = (d["judgment"][keep] * 1_000_000_000 + d["answer"][keep]) * 4 + dim_index[keep]
    _keys, dim_rows = _index(dim_key)
    first = np.unique(dim_rows, return_index=True)[1]
    dim_means = np.bincount(dim_rows, weights=d["value"][keep]) / np.bincount(dim_rows)

    def both(column):
        return np.concatenate([column, column[keep][first]])

    rows = {name: both(d[name]) for name in RATING_COLUMNS}
    rows["cell"] = both(_cells(d))
    rows["label"] = np.concatenate([metric_slot, len(metric_ids) + dim_index[keep][first]])
    rows["value"] = np.concatenate([d["value"].astype(float), dim_means])
    rows["labels"] = labels
    return rows


def _leaderboard(rows, sources, rules: Rules, selected=None) -> dict:
    """Mean rating per source and metric, and per source and dimension, with two-way
    cluster-robust intervals; over the rows of `selected` (a boolean mask) when given."""
    if selected is not None:
        rows = {key: value if key == "labels" else value[selected] for key, value in rows.items()}
    if len(rows["value"]) == 0:
        return {}
    labels = rows["labels"]
    n_labels = len(labels)
    source_ids, source_index = _index(rows["source"])
    _cell_ids, cell_index = _index(rows["cell"] - rows["cell"].min())
    _annotator_ids, annotator_index = _index(rows["annotator"])
    estimates = two_way_cluster_means(
        rows["value"],
        source_index * n_labels + rows["label"],
        cell_index,
        annotator_index,
        len(source_ids) * n_labels,
        confidence=rules.confidence,
    )
    board = {}
    for s_index, source_id in enumerate(source_ids.tolist()):
        board[sources[source_id].slug] = {
            label: _estimate(estimates, s_index * n_labels + position, rules)
            for position, label in enumerate(labels)
            if estimates.n[s_index * n_labels + position]
        }
    return board


def _estimate(estimates, g, rules: Rules) -> dict:
    """One mean with its interval, or without one (`enough_data` false) when it rests on
    fewer judgments or annotators than the minimum."""
    enough = bool(
        enough_information(
            estimates.n[g],
            estimates.annotators[g],
            min_judgments=rules.min_judgments,
            min_annotators=rules.min_annotators,
        )
    )
    return {
        "mean": _clean(estimates.mean[g]),
        "ci_low": _clean(estimates.ci_low[g]) if enough else None,
        "ci_high": _clean(estimates.ci_high[g]) if enough else None,
        "n": int(estimates.n[g]),
        "annotators": int(estimates.annotators[g]),
        "cells": int(estimates.cells[g]),
        "enough_data": enough,
    }


def _diversity(data, sources, rules: Rules) -> dict:
    """Mean diversity rating of each source's diversity sets."""
    d = _subset(data, data["is_pair"] == 0)
    if len(d["value"]) == 0:
        return {}
    source_ids, source_index = _index(d["source"])
    _c, cell_index = _index(d["item"])
    _a, annotator_index = _index(d["annotator"])
    estimates = two_way_cluster_means(
        d["value"].astype(float),
        source_index,
        cell_index,
        annotator_index,
        len(source_ids),
        confidence=rules.confidence,
    )
    return {
        sources[source_id].slug: _estimate(estimates, i, rules)
        for i, source_id in enumerate(source_ids.tolist())
    }


def _paired_differences(reference, data, metric_by_id, sources, rules: Rules) -> dict:
    """Within one judgment: compared answer minus reference answer, per metric."""
    d = _subset(data, data["is_pair"] == 1)
    is_reference = d["source"] == reference
    if not is_reference.any() or is_reference.all():
        return {}
    # Match each compared rating with the reference rating of the same judgment and metric.
    key = d["judgment"] * 100_000 + d["metric"]
    reference_keys, reference_values = key[is_reference], d["value"][is_reference]
    order = np.argsort(reference_keys)
    reference_keys, reference_values = reference_keys[order], reference_values[order]
    compared = np.flatnonzero(~is_reference)
    found = np.searchsorted(reference_keys, key[compared])
    found = np.minimum(found, len(reference_keys) - 1)
    matched = reference_keys[found] == key[compared]
    compared, found = compared[matched], found[matched]
    differences = (d["value"][compared] - reference_values[found]).astype(float)

    metric_ids = list(metric_by_id)
    slot_of = np.full(max(metric_ids) + 1, -1)
    slot_of[metric_ids] = np.arange(len(metric_ids))
    source_ids, source_index = _index(d["source"][compared])
    _c, cell_index = _index(d["character"][compared] * 1000 + d["scenario"][compared])
    _a, annotator_index = _index(d["annotator"][compared])
    n_metrics = len(metric_ids)
    estimates = two_way_cluster_means(
        differences,
        source_index * n_metrics + slot_of[d["metric"][compared]],
        cell_index,
        annotator_index,
        len(source_ids) * n_metrics,
        confidence=rules.confidence,
    )
    return {
        sources[source_id].slug: {
            metric_by_id[m].slug: _estimate(estimates, s_index * n_metrics + j, rules)
            for j, m in enumerate(metric_ids)
            if estimates.n[s_index * n_metrics + j]
        }
        for s_index, source_id in enumerate(source_ids.tolist())
    }


def _proportion(successes, n, deff, low, high, annotators, rules: Rules) -> dict:
    enough = bool(
        enough_information(
            n, annotators, min_judgments=rules.min_judgments, min_annotators=rules.min_annotators
        )
    )
    return {
        "ci_low": _clean(low) if enough else None,
        "ci_high": _clean(high) if enough else None,
        "design_effect": _clean(deff),
        "annotators": int(annotators),
        "enough_data": enough,
    }


def _preferences(rows, reference, sources, rules: Rules) -> dict:
    """Win / tie / loss against the reference, Bradley-Terry strengths over all pairs,
    how often each source passed for human, and position bias."""
    annotator_names = sorted({row[8] or "" for row in rows})
    annotator_of = {name: i for i, name in enumerate(annotator_names)}
    outcomes = []  # (compared source, outcome 0 win / 1 tie / 2 loss, cell, annotator)
    guesses = []  # (source, passed for human, cell, annotator)
    comparisons = []
    positions = []  # (annotator name, left won, cell, annotator)
    for character, scenario, preferred, is_tie, guess, asked, left, right, name in rows:
        cell = character * 1000 + (scenario or 0)
        annotator = annotator_of[name or ""]
        pair = (left, right)
        compared = [s for s in pair if s != reference]
        if reference in pair and compared:
            other = compared[0]
            outcome = 1 if is_tie else (0 if preferred == other else 2)
            outcomes.append((other, outcome, cell, annotator))
        if asked:
            for source in pair:
                guesses.append((source, guess == source, cell, annotator))
        if is_tie:
            comparisons.append((left, right, True, cell, annotator))
        elif preferred is not None:
            loser = right if preferred == left else left
            comparisons.append((preferred, loser, False, cell, annotator))
            positions.append((name or "", preferred == left, cell, annotator))

    out = {"preferences": {}, "bradley_terry": {}, "human_guess": {}, "position_bias": {}}
    if outcomes:
        table = np.array(outcomes, dtype=np.int64)
        ids, group = _index(table[:, 0])
        _c, cell = _index(table[:, 2] - table[:, 2].min())
        won = clustered_proportions(table[:, 1] == 0, group, cell, table[:, 3], len(ids))
        annotators = _distinct_per_group(group, table[:, 3], len(ids))
        for i, source_id in enumerate(ids.tolist()):
            mine = table[group == i, 1]
            wins, ties, losses = (int((mine == k).sum()) for k in range(3))
            n = len(mine)
            _s, _n, deff, low, high = won[i]
            interval = _proportion(wins, n, deff, low, high, annotators[i], rules)
            out["preferences"][sources[source_id].slug] = {
                "wins": wins,
                "ties": ties,
                "losses": losses,
                "n": n,
                "win_rate": _clean(wins / n),
                "win_low": interval.pop("ci_low"),
                "win_high": interval.pop("ci_high"),
                **interval,
                "tie_rate": _clean(ties / n),
                "loss_rate": _clean(losses / n),
            }
    if comparisons:
        ids, index = _index(np.array([c[0] for c in comparisons] + [c[1] for c in comparisons]))
        half = len(comparisons)
        _cells_ids, cluster = _index(np.array([c[3] for c in comparisons]))
        strengths = bradley_terry_estimates(
            index[:half],
            index[half:],
            [c[2] for c in comparisons],
            cluster,
            len(ids),
            draws=rules.draws,
            seed=rules.seed + 17,
            confidence=rules.confidence,
            annotator=[c[4] for c in comparisons],
        )
        for i, source_id in enumerate(ids.tolist()):
            status = strengths.status[i]
            out["bradley_terry"][sources[source_id].slug] = {
                "log_strength": _clean(strengths.log_strength[i]),
                "ci_low": _clean(strengths.ci_low[i]),
                "ci_high": _clean(strengths.ci_high[i]),
                "estimable": status == "ok",
                "status": status,
            }
    if guesses:
        table = np.array(guesses, dtype=np.int64)
        ids, group = _index(table[:, 0])
        _c, cell = _index(table[:, 2] - table[:, 2].min())
        passed = clustered_proportions(table[:, 1], group, cell, table[:, 3], len(ids))
        annotators = _distinct_per_group(group, table[:, 3], len(ids))
        for i, source_id in enumerate(ids.tolist()):
            times, asked, deff, low, high = passed[i]
            out["human_guess"][sources[source_id].slug] = {
                "passed_for_human": int(times),
                "asked": asked,
                "rate": _clean(times / asked),
                **_proportion(times, asked, deff, low, high, annotators[i], rules),
            }
    if positions:
        names = ["overall", *sorted({p[0] for p in positions})]
        left_won = np.array([p[1] for p in positions], dtype=float)
        cell = _index(np.array([p[2] for p in positions]) - min(p[2] for p in positions))[1]
        annotator = np.array([p[3] for p in positions], dtype=np.int64)
        group_of = {name: i for i, name in enumerate(names)}
        # Every decided judgment counts overall and for its annotator.
        group = np.concatenate(
            [
                np.zeros(len(positions), dtype=np.int64),
                np.array([group_of[p[0]] for p in positions]),
            ]
        )
        both = clustered_proportions(
            np.concatenate([left_won, left_won]),
            group,
            np.concatenate([cell, cell]),
            np.concatenate([annotator, annotator]),
            len(names),
        )
        annotators = _distinct_per_group(group, np.concatenate([annotator, annotator]), len(names))
        for i, name in enumerate(names):
            left, n, deff, low, high = both[i]
            # One annotator's own position bias: the minimum is about judgments only.
            enough_annotators = annotators[i] if i == 0 else rules.min_annotators
            out["position_bias"][name] = {
                "left": int(left),
                "right": n - int(left),
                "n": n,
                "left_rate": _clean(left / n),
                **_proportion(left, n, deff, low, high, enough_annotators, rules),
            }
            out["position_bias"][name]["annotators"] = int(annotators[i])
    return out


def _distinct_per_group(group, annotator, n_groups) -> np.ndarray:
    """How many distinct annotators each group has."""
    group, annotator = np.asarray(group, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    if len(group) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    n_annotators = int(annotator.max()) + 1
    distinct = np.unique(group * n_annotators + annotator)
    return np.bincount(distinct // n_annotators, minlength=n_groups)


def _annotator_quality(study, deviations) -> dict:
    """Per annotator (by pseudonym): counted judgments and their median time, distance
    from the others, gold accuracy, open flags. Every figure but the gold checks (which
    are about gold items, never counted) is over counted judgments only, like the rest
    of the results; `excluded` says how many of the annotator's judgments staff set aside."""
    pseudonyms = dict(AnnotatorProfile.objects.values_list("user_id", "pseudonym"))
    judgments = Judgment.objects.filter(item__study=study)
    seconds = defaultdict(list)
    for annotator_id, taken in judgments.counted().values_list("annotator_id", "seconds_on_task"):
        seconds[annotator_id].append(taken)
    excluded = dict(
        judgments.filter(excluded=True).values_list("annotator_id").annotate(n=Count("pk"))
    )
    gold = defaultdict(lambda: [0, 0])
    for annotator_id, passed in GoldCheck.objects.filter(judgment__item__study=study).values_list(
        "judgment__annotator_id", "passed"
    ):
        gold[annotator_id][0] += passed
        gold[annotator_id][1] += 1
    flags = dict(
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
    )
    annotators = set(judgments.values_list("annotator_id", flat=True).distinct())
    return {
        pseudonyms.get(annotator_id, str(annotator_id)): {
            "judgments": len(seconds[annotator_id]),
            "excluded": excluded.get(annotator_id, 0),
            "mean_distance": _clean(deviations.get(annotator_id, (float("nan"), 0))[0]),
            "units_compared": deviations.get(annotator_id, (0, 0))[1],
            "gold_passed": gold[annotator_id][0],
            "gold_checked": gold[annotator_id][1],
            "open_flags": flags.get(annotator_id, 0),
            "median_seconds": _median_to_the_millisecond(seconds[annotator_id])
            if seconds[annotator_id]
            else None,
        }
        for annotator_id in sorted(annotators)
    }


def _median_to_the_millisecond(seconds: list) -> float | None:
    """The median of the times rounded to the millisecond, as the export has them, so
    that it can be rebuilt. Rounding keeps the order, so only the middle one or two
    need rounding."""
    ordered = sorted(seconds)
    middle = ordered[(len(ordered) - 1) // 2 : len(ordered) // 2 + 1]
    return _clean(float(np.median([seconds_value(s) for s in middle])))
