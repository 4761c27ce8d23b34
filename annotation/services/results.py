"""Recomputing a study's derived results from its judgments.

Reads the ratings of non-excluded judgments of non-gold items as flat integer arrays
(one query), hands them to the pure functions in `annotation.stats`, and replaces the
study's StudyResults row. Idempotent: the same judgments give the same document.
"""

import math
import time
from collections import defaultdict

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from dialogues.models import Source

from ..models import (
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
    bootstrap_alpha,
    counts_from_ratings,
    icc_1k,
    krippendorff_alpha,
    patterns,
    within_one,
)
from ..stats.estimates import bradley_terry_bootstrap, cluster_bootstrap_means, wilson_interval
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
WHERE i.study_id = {study} AND NOT j.excluded AND NOT i.is_gold
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
        cursor.execute(RATINGS_SQL.format(study=int(study.pk)))
        flat = np.array(cursor.fetchall(), dtype=np.int64).ravel()
    table = flat.reshape(-1, len(COLUMNS))
    return {name: table[:, i] for i, name in enumerate(COLUMNS)}


# On PostgreSQL, moving 1.3 million rows of eleven numbers as text is most of the cost of a
# recompute. So only what varies per rating crosses the wire, packed by the server into one
# binary value (16 bytes a rating, read by numpy without a Python loop: a COPY would hand
# Python one block per row); what a rating shares with its judgment, item and answer comes
# in three small queries and is spread by indexing.
PACKED_RATINGS_SQL = """
SELECT string_agg(
    int8send(r.judgment_id) || int4send(COALESCE(r.answer_id, 0)::int4)
    || int4send((r.metric_id * 8 + r.value)::int4),
    ''::bytea)
FROM annotation_rating r
JOIN annotation_judgment j ON j.id = r.judgment_id
JOIN annotation_item i ON i.id = j.item_id
WHERE i.study_id = %s AND NOT j.excluded AND NOT i.is_gold
"""
_PACKED_RATING = np.dtype([("judgment", ">i8"), ("answer", ">i4"), ("metric_value", ">i4")])
JUDGMENTS_SQL = """
SELECT j.id, j.annotator_id, j.item_id
FROM annotation_judgment j JOIN annotation_item i ON i.id = j.item_id
WHERE i.study_id = %s AND NOT j.excluded AND NOT i.is_gold
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


def results_refresh(*, study: Study, data=None, deviations=None) -> StudyResults:
    started = time.perf_counter()
    draws = settings.CHATANIME_BOOTSTRAP_DRAWS
    data = data if data is not None else load_ratings(study)
    metrics = list(Metric.objects.order_by("position"))
    metric_by_id = {m.pk: m for m in metrics}
    sources = {s.pk: s for s in Source.objects.all()}
    judgments = Judgment.objects.filter(item__study=study, excluded=False, item__is_gold=False)

    rated_sources = set(np.unique(data["source"]).tolist())
    payload = {
        "study": study.slug,
        "judgments": judgments.count(),
        "metrics": [
            {
                "slug": m.slug,
                "label_zh": m.label_zh,
                "label_en": m.label_en,
                "dimension": m.dimension,
            }
            for m in metrics
        ],
        "sources": {
            s.slug: {"display_name": s.display_name, "kind": s.kind}
            for s in sources.values()
            if s.pk in rated_sources
        },
    }
    # Every scope (the study, each round, each character) is a selection of units or
    # rows prepared once, not another pass over the ratings.
    tables, unit_scope = _agreement_tables(data, metric_by_id)
    payload["agreement"] = _agreement(tables, metric_by_id, draws)
    payload["agreement_by_round"] = {
        str(r): _agreement(tables, metric_by_id, 0, unit_scope["round"] == r) for r in (1, 2)
    }
    characters = np.unique(data["character"]).tolist()
    payload["agreement_by_character"] = {
        str(c): _agreement(tables, metric_by_id, 0, unit_scope["character"] == c)
        for c in characters
    }
    rows = _leaderboard_rows(data, metric_by_id)
    payload["leaderboard"] = _leaderboard(rows, sources, draws)
    payload["leaderboard_by_round"] = {
        str(r): _leaderboard(rows, sources, selected=rows["round"] == r) for r in (1, 2)
    }
    payload["leaderboard_by_character"] = {
        str(c): _leaderboard(rows, sources, selected=rows["character"] == c) for c in characters
    }
    payload["diversity"] = _diversity(data, sources, draws)
    payload["paired_differences"] = _paired_differences(study, data, metric_by_id, sources, draws)
    payload.update(_preferences(study, judgments, sources, draws))
    payload["annotators"] = _annotator_quality(
        study, deviations if deviations is not None else deviations_of(data)
    )
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


def _subset(data, mask):
    if mask.all():
        return data
    return {name: column[mask] for name, column in data.items()}


def _agreement_tables(data, metric_by_id) -> tuple[dict, dict]:
    """A units x values count table per metric over the whole study, and each unit's
    character and round. The unit is one answer within one item (for diversity, the
    item); a unit's row is all zeros for a metric it has no ratings on."""
    unit_ids, unit = _index(data["item"] * 1_000_000_000 + data["answer"])
    unit_scope = {}
    for column in ("character", "round"):
        unit_scope[column] = np.zeros(len(unit_ids), dtype=np.int64)
        unit_scope[column][unit] = data[column]
    tables = {}
    for metric_id in metric_by_id:
        mask = data["metric"] == metric_id
        if mask.any():
            tables[metric_id] = counts_from_ratings(
                unit[mask], data["value"][mask] - 1, len(VALUES), n_units=len(unit_ids)
            )
    return tables, unit_scope


def _agreement(tables, metric_by_id, draws: int, units=None) -> dict:
    """Per metric, over all units or the selected ones (a boolean mask over units)."""
    out = {}
    for metric_id, table in tables.items():
        counts = table if units is None else table[units]
        if not counts.any():
            continue
        # The distinct count patterns, found once for every figure below.
        reduced = patterns(counts)
        estimate = bootstrap_alpha(
            counts, VALUES, "ordinal", draws=draws, seed=metric_id, reduced=reduced
        )
        out[metric_by_id[metric_id].slug] = {
            "alpha_ordinal": _clean(
                estimate.alpha
                if draws
                else krippendorff_alpha(counts, VALUES, "ordinal", reduced=reduced)
            ),
            "alpha_interval": _clean(
                krippendorff_alpha(counts, VALUES, "interval", reduced=reduced)
            ),
            "ci_low": _clean(estimate.ci_low) if draws else None,
            "ci_high": _clean(estimate.ci_high) if draws else None,
            "icc_1k": _clean(icc_1k(counts, VALUES, reduced=reduced)),
            "within_one": _clean(within_one(counts, VALUES, reduced=reduced)),
            "n_items": estimate.n_units,
        }
    return out


def _cells(data) -> np.ndarray:
    """Bootstrap clusters: the (character, scenario) cell of a pair; a diversity item is
    its own cell."""
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


def _leaderboard(rows, sources, draws: int = 0, selected=None) -> dict:
    """Mean rating per source and metric, and per source and dimension, with cluster
    bootstrap intervals when `draws` is given; over the rows of `selected` (a boolean
    mask) when given."""
    if selected is not None:
        rows = {key: value if key == "labels" else value[selected] for key, value in rows.items()}
    if len(rows["value"]) == 0:
        return {}
    labels = rows["labels"]
    source_ids, source_index = _index(rows["source"])
    if draws:
        _cell_ids, cell_index = _index(rows["cell"])
        _annotator_ids, annotator_index = _index(rows["annotator"])
    else:  # means only: the clusters are not needed
        cell_index = annotator_index = np.zeros(len(rows["value"]), dtype=np.int64)
    n_labels = len(labels)
    estimates = cluster_bootstrap_means(
        rows["value"],
        source_index * n_labels + rows["label"],
        cell_index,
        annotator_index,
        len(source_ids) * n_labels,
        draws=draws,
        seed=11,
    )
    return _board(estimates, source_ids, labels, sources)


def _board(estimates, source_ids, labels, sources) -> dict:
    n_labels = len(labels)
    board = {}
    for s_index, source_id in enumerate(source_ids.tolist()):
        rows = {}
        for label_position, label in enumerate(labels):
            g = s_index * n_labels + label_position
            if estimates.n[g]:
                rows[label] = _estimate(estimates, g)
        board[sources[source_id].slug] = rows
    return board


def _estimate(estimates, g) -> dict:
    return {
        "mean": _clean(estimates.mean[g]),
        "ci_low": _clean(estimates.ci_low[g]),
        "ci_high": _clean(estimates.ci_high[g]),
        "n": int(estimates.n[g]),
    }


def _diversity(data, sources, draws: int) -> dict:
    """Mean diversity rating of each source's diversity sets."""
    d = _subset(data, data["is_pair"] == 0)
    if len(d["value"]) == 0:
        return {}
    source_ids, source_index = _index(d["source"])
    _c, cell_index = _index(d["item"])
    _a, annotator_index = _index(d["annotator"])
    estimates = cluster_bootstrap_means(
        d["value"].astype(float),
        source_index,
        cell_index,
        annotator_index,
        len(source_ids),
        draws=draws,
        seed=19,
    )
    return {
        sources[source_id].slug: {
            "mean": _clean(estimates.mean[i]),
            "ci_low": _clean(estimates.ci_low[i]),
            "ci_high": _clean(estimates.ci_high[i]),
            "n": int(estimates.n[i]),
        }
        for i, source_id in enumerate(source_ids.tolist())
    }


def _paired_differences(study, data, metric_by_id, sources, draws: int) -> dict:
    """Within one judgment: compared answer minus reference answer, per metric."""
    d = _subset(data, data["is_pair"] == 1)
    is_reference = d["source"] == study.reference_source_id
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
    estimates = cluster_bootstrap_means(
        differences,
        source_index * n_metrics + slot_of[d["metric"][compared]],
        cell_index,
        annotator_index,
        len(source_ids) * n_metrics,
        draws=draws,
        seed=13,
    )
    return {
        sources[source_id].slug: {
            metric_by_id[m].slug: _estimate(estimates, s_index * n_metrics + j)
            for j, m in enumerate(metric_ids)
            if estimates.n[s_index * n_metrics + j]
        }
        for s_index, source_id in enumerate(source_ids.tolist())
    }


def _preferences(study, judgments, sources, draws: int) -> dict:
    """Win / tie / loss against the reference, Bradley-Terry strengths over all pairs,
    how often each source passed for human, and position bias."""
    rows = list(
        judgments.filter(item__kind=ItemKind.PAIR).values_list(
            "pk",
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
    reference = study.reference_source_id
    win_tie_loss = defaultdict(lambda: [0, 0, 0])
    guessed = defaultdict(lambda: [0, 0])
    comparisons = []
    position = defaultdict(lambda: [0, 0])
    for _pk, character, scenario, preferred, is_tie, guess, asked, left, right, pseudonym in rows:
        pair = (left, right)
        compared = [s for s in pair if s != reference]
        if reference in pair and compared:
            other = compared[0]
            outcome = 1 if is_tie else (0 if preferred == other else 2)
            win_tie_loss[other][outcome] += 1
        if asked:
            for source in pair:
                guessed[source][1] += 1
                guessed[source][0] += guess == source
        if is_tie:
            comparisons.append((left, right, True, character * 1000 + scenario))
        elif preferred is not None:
            loser = right if preferred == left else left
            comparisons.append((preferred, loser, False, character * 1000 + scenario))
            for key in ("overall", pseudonym):
                position[key][0 if preferred == left else 1] += 1

    out = {"preferences": {}, "bradley_terry": {}, "human_guess": {}, "position_bias": {}}
    for source_id, (wins, ties, losses) in win_tie_loss.items():
        n = wins + ties + losses
        low, high = wilson_interval(wins, n)
        out["preferences"][sources[source_id].slug] = {
            "wins": wins,
            "ties": ties,
            "losses": losses,
            "n": n,
            "win_rate": _clean(wins / n),
            "win_low": _clean(low),
            "win_high": _clean(high),
            "tie_rate": _clean(ties / n),
            "loss_rate": _clean(losses / n),
        }
    if comparisons:
        ids, index = _index(np.array([c[0] for c in comparisons] + [c[1] for c in comparisons]))
        half = len(comparisons)
        _cells_ids, cluster = _index(np.array([c[3] for c in comparisons]))
        estimate, low, high = bradley_terry_bootstrap(
            index[:half],
            index[half:],
            [c[2] for c in comparisons],
            cluster,
            len(ids),
            draws=draws,
            seed=17,
        )
        for i, source_id in enumerate(ids.tolist()):
            out["bradley_terry"][sources[source_id].slug] = {
                "log_strength": _clean(estimate[i]),
                "ci_low": _clean(low[i]),
                "ci_high": _clean(high[i]),
            }
    for source_id, (times, asked) in guessed.items():
        low, high = wilson_interval(times, asked)
        out["human_guess"][sources[source_id].slug] = {
            "passed_for_human": times,
            "asked": asked,
            "rate": _clean(times / asked),
            "ci_low": _clean(low),
            "ci_high": _clean(high),
        }
    for key, (left_wins, right_wins) in position.items():
        n = left_wins + right_wins
        low, high = wilson_interval(left_wins, n)
        out["position_bias"][str(key)] = {
            "left": left_wins,
            "right": right_wins,
            "n": n,
            "left_rate": _clean(left_wins / n),
            "ci_low": _clean(low),
            "ci_high": _clean(high),
        }
    return out


def _annotator_quality(study, deviations) -> dict:
    """Per annotator (by pseudonym): judgments, distance from the others, gold accuracy,
    open flags."""
    pseudonyms = dict(AnnotatorProfile.objects.values_list("user_id", "pseudonym"))

    judged = dict(
        Judgment.objects.filter(item__study=study)
        .values_list("annotator_id")
        .annotate(n=Count("pk"))
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
    seconds = defaultdict(list)
    for annotator_id, taken in Judgment.objects.filter(item__study=study).values_list(
        "annotator_id", "seconds_on_task"
    ):
        seconds[annotator_id].append(taken)
    return {
        pseudonyms.get(annotator_id, str(annotator_id)): {
            "judgments": n,
            "mean_distance": _clean(deviations.get(annotator_id, (float("nan"), 0))[0]),
            "units_compared": deviations.get(annotator_id, (0, 0))[1],
            "gold_passed": gold[annotator_id][0],
            "gold_checked": gold[annotator_id][1],
            "open_flags": flags.get(annotator_id, 0),
            "median_seconds": _clean(float(np.median(seconds[annotator_id]))),
        }
        for annotator_id, n in judged.items()
    }
