"""The study's agreement and mean-rating figures, from counted ratings held as parallel
integer arrays (`arrays.COLUMNS`): agreement per
metric, leaderboards, diversity and paired differences, each with its interval."""

import numpy as np

from .agreement import (
    counts_from_ratings,
    icc_1k,
    krippendorff_alpha,
    patterns,
    within_one,
)
from .arrays import VALUES, agreement_unit, cells_of, clean, index_of, subset
from .clustered import alpha_two_way
from .icc import icc_two_way
from .intervals import two_way_cluster_means
from .minimum import enough_data, enough_for_interval, enough_information
from .rules import Rules


def agreement_tables(data, metric_by_id) -> tuple[dict, dict]:
    """A units x values count table per metric over the whole study, and each unit's
    character, round and cell. The unit is one answer within one item (for diversity,
    the item); a unit's row is all zeros for a metric it has no ratings on."""
    unit_ids, unit = index_of(agreement_unit(data["item"], data["answer"]))
    unit_scope: dict = {}
    for column in ("character", "round"):
        unit_scope[column] = np.zeros(len(unit_ids), dtype=np.int64)
        unit_scope[column][unit] = data[column]
    cells = cells_of(data)
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


def agreement(tables, unit_scope, metric_by_id, rules, annotators: int, units=None) -> dict:
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
            "alpha_ordinal": clean(krippendorff_alpha(counts, VALUES, "ordinal", reduced=reduced)),
            "alpha_interval": clean(
                krippendorff_alpha(counts, VALUES, "interval", reduced=reduced)
            ),
            "ci_low": None,
            "ci_high": None,
            "icc_1k": clean(icc_1k(counts, VALUES, reduced=reduced)),
            "icc_ci_low": None,
            "icc_ci_high": None,
            "within_one": clean(within_one(counts, VALUES, reduced=reduced)),
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
                unit, value_index, annotator, cell = unit_scope["ratings"][metric_id]
                estimate = alpha_two_way(
                    unit,
                    value_index,
                    annotator,
                    cell,
                    VALUES,
                    "ordinal",
                    confidence=rules.confidence,
                )
                row["enough_data"] = bool(
                    enough_for_interval(enough, estimate.ci_low, estimate.ci_high)
                )
                row["ci_low"] = clean(estimate.ci_low)
                row["ci_high"] = clean(estimate.ci_high)
                icc = icc_two_way(
                    unit,
                    np.asarray(VALUES)[value_index],
                    annotator,
                    cell,
                    confidence=rules.confidence,
                )
                row["icc_ci_low"] = clean(icc.ci_low)
                row["icc_ci_high"] = clean(icc.ci_high)
        out[metric_by_id[metric_id].slug] = row
    return out


# What each leaderboard row carries over from its rating.
RATING_COLUMNS = ("source", "annotator", "character", "round")


def leaderboard_rows(data, metric_by_id, dimensions: list) -> dict:
    """What a leaderboard averages: every pair rating under its metric's label, plus one
    row per (judgment, answer, dimension) under the dimension's label holding that
    judgment's mean over the dimension's metrics. Parallel arrays, and the labels."""
    pair = data["is_pair"] == 1
    d = subset(data, pair)
    metric_ids = list(metric_by_id)
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
    _keys, dim_rows = index_of(dim_key)
    first = np.unique(dim_rows, return_index=True)[1]
    dim_means = np.bincount(dim_rows, weights=d["value"][keep]) / np.bincount(dim_rows)

    def both(column):
        return np.concatenate([column, column[keep][first]])

    rows = {name: both(d[name]) for name in RATING_COLUMNS}
    rows["cell"] = both(cells_of(d))
    rows["label"] = np.concatenate([metric_slot, len(metric_ids) + dim_index[keep][first]])
    rows["value"] = np.concatenate([d["value"].astype(float), dim_means])
    rows["labels"] = labels
    return rows


def leaderboard(rows, sources, rules: Rules, selected=None) -> dict:
    """Mean rating per source and metric, and per source and dimension, with two-way
    cluster-robust intervals; over the rows of `selected` (a boolean mask) when given."""
    if selected is not None:
        rows = {key: value if key == "labels" else value[selected] for key, value in rows.items()}
    if len(rows["value"]) == 0:
        return {}
    labels = rows["labels"]
    n_labels = len(labels)
    source_ids, source_index = index_of(rows["source"])
    _cell_ids, cell_index = index_of(rows["cell"] - rows["cell"].min())
    _annotator_ids, annotator_index = index_of(rows["annotator"])
    estimates = two_way_cluster_means(
        rows["value"],
        source_index * n_labels + rows["label"],
        cell_index,
        annotator_index,
        len(source_ids) * n_labels,
        confidence=rules.confidence,
    )
    table = estimate_table(estimates, rules)
    board = {}
    for s_index, source_id in enumerate(source_ids.tolist()):
        board[sources[source_id].slug] = {
            label: table[s_index * n_labels + position]
            for position, label in enumerate(labels)
            if table[s_index * n_labels + position]["n"]
        }
    return board


def estimate_table(estimates, rules: Rules) -> list[dict]:
    """Each group's mean with its interval, or without one (`enough_data` false) when it
    rests on fewer judgments or annotators than the minimum. All groups at once, read
    from plain lists: one group at a time through numpy's scalars, the results' thousands
    of figures took about a sixth of a recompute."""
    enough = np.broadcast_to(
        enough_data(estimates.n, estimates.annotators, estimates.ci_low, estimates.ci_high, rules),
        np.shape(estimates.n),
    ).tolist()
    columns = zip(
        enough,
        np.asarray(estimates.mean, dtype=float).tolist(),
        np.asarray(estimates.ci_low, dtype=float).tolist(),
        np.asarray(estimates.ci_high, dtype=float).tolist(),
        np.asarray(estimates.n).tolist(),
        np.asarray(estimates.annotators).tolist(),
        np.asarray(estimates.cells).tolist(),
        strict=True,
    )
    return [
        {
            "mean": clean(mean),
            "ci_low": clean(low) if enough else None,
            "ci_high": clean(high) if enough else None,
            "n": int(n),
            "annotators": int(annotators),
            "cells": int(cells),
            "enough_data": bool(enough),
        }
        for enough, mean, low, high, n, annotators, cells in columns
    ]


def diversity(data, sources, rules: Rules) -> dict:
    """Mean diversity rating of each source's diversity sets."""
    d = subset(data, data["is_pair"] == 0)
    if len(d["value"]) == 0:
        return {}
    source_ids, source_index = index_of(d["source"])
    _c, cell_index = index_of(d["item"])
    _a, annotator_index = index_of(d["annotator"])
    estimates = two_way_cluster_means(
        d["value"].astype(float),
        source_index,
        cell_index,
        annotator_index,
        len(source_ids),
        confidence=rules.confidence,
    )
    table = estimate_table(estimates, rules)
    return {sources[source_id].slug: table[i] for i, source_id in enumerate(source_ids.tolist())}


def with_reference(reference, data) -> tuple[dict, np.ndarray, np.ndarray] | None:
    """The pair ratings, and each compared rating matched with the reference rating of
    the same judgment and metric: (pair ratings, compared rows, their reference rows);
    None without both kinds of ratings."""
    d = subset(data, data["is_pair"] == 1)
    is_reference = d["source"] == reference
    if not is_reference.any() or is_reference.all():
        return None
    key = d["judgment"] * 100_000 + d["metric"]
    reference_rows = np.flatnonzero(is_reference)
    reference_rows = reference_rows[np.argsort(key[reference_rows])]
    reference_keys = key[reference_rows]
    compared = np.flatnonzero(~is_reference)
    found = np.searchsorted(reference_keys, key[compared])
    found = np.minimum(found, len(reference_keys) - 1)
    matched = reference_keys[found] == key[compared]
    return d, compared[matched], reference_rows[found[matched]]


def paired_differences(paired, metric_by_id, sources, rules: Rules) -> dict:
    """Within one judgment: compared answer minus reference answer, per metric, from the
    ratings matched by `with_reference`."""
    if paired is None:
        return {}
    d, compared, against = paired
    differences = (d["value"][compared] - d["value"][against]).astype(float)

    metric_ids = list(metric_by_id)
    slot_of = np.full(max(metric_ids) + 1, -1)
    slot_of[metric_ids] = np.arange(len(metric_ids))
    source_ids, source_index = index_of(d["source"][compared])
    _c, cell_index = index_of(d["character"][compared] * 1000 + d["scenario"][compared])
    _a, annotator_index = index_of(d["annotator"][compared])
    n_metrics = len(metric_ids)
    estimates = two_way_cluster_means(
        differences,
        source_index * n_metrics + slot_of[d["metric"][compared]],
        cell_index,
        annotator_index,
        len(source_ids) * n_metrics,
        confidence=rules.confidence,
    )
    table = estimate_table(estimates, rules)
    return {
        sources[source_id].slug: {
            metric_by_id[m].slug: table[s_index * n_metrics + j]
            for j, m in enumerate(metric_ids)
            if table[s_index * n_metrics + j]["n"]
        }
        for s_index, source_id in enumerate(source_ids.tolist())
    }
