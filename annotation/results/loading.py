"""The one read of a study's counted ratings, as parallel integer arrays (COLUMNS): what
the results, the quality flags and the benchmarks compute from."""

import numpy as np
from django.db import connection

from .. import sql
from ..models import COUNTED_JUDGMENT_SQL, ItemAnswer, ItemKind, Study
from ..stats.arrays import COLUMNS
from ..stats.style import answer_style

RATINGS_SQL = """
SELECT r.value, r.metric_id, j.id, j.annotator_id, i.id, i.character_id,
       COALESCE(i.scenario_id, 0), COALESCE(i.round, 0),
       CASE WHEN i.kind = 'pair' THEN 1 ELSE 0 END,
       COALESCE(a.source_id, i.diversity_source_id), COALESCE(r.answer_id, 0)
FROM annotation_rating r
JOIN annotation_judgment j ON j.id = r.judgment_id
JOIN annotation_item i ON i.id = j.item_id
LEFT JOIN dialogues_answer a ON a.id = r.answer_id
WHERE i.study_id = {study} AND {counted}
"""


def load_answer_styles(study: Study) -> dict[int, tuple[int, int]]:
    """Answer id -> (length, emoji and kaomoji) of every answer in the study's pairs."""
    texts = ItemAnswer.objects.filter(item__study=study, item__kind=ItemKind.PAIR).values_list(
        "answer_id", "answer__text"
    )
    return {answer: answer_style(text) for answer, text in texts.distinct()}


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
       CASE WHEN i.kind = 'pair' THEN 1 ELSE 0 END, COALESCE(i.diversity_source_id, 0)
FROM annotation_item i
WHERE i.study_id = %s
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


PREFERENCES_SQL = f"""
SELECT i.character_id, i.scenario_id, j.preferred_answer_id, j.is_tie, j.human_guess_id,
       j.human_guess_asked, a.left_source_id, a.right_source_id, p.pseudonym
FROM annotation_judgment j
JOIN annotation_item i ON i.id = j.item_id
JOIN annotation_assignment a ON a.id = j.assignment_id
LEFT JOIN annotation_annotatorprofile p ON p.user_id = j.annotator_id
WHERE i.study_id = %s AND i.kind = 'pair' AND {COUNTED_JUDGMENT_SQL}
ORDER BY j.id
"""


def load_preference_rows(study: Study, data: dict[str, np.ndarray]) -> list[tuple]:
    """Each counted pair judgment as `stats.preferences` reads it: (character, scenario,
    preferred source, tie, guessed source, guess asked, left source, right source,
    annotator's pseudonym). The sources of the preferred and guessed answers are taken
    from the ratings already read (`data`: a pair judgment rates both its answers), so
    the answers table, wide with their texts, is not scanned again for each of them (two
    thirds of this read's time on the published data); any not found there are read by
    id."""
    with connection.cursor() as cursor:
        cursor.execute(PREFERENCES_SQL, [study.pk])
        found = cursor.fetchall()
    answers, first = np.unique(data["answer"], return_index=True)
    source_of = dict(zip(answers.tolist(), data["source"][first].tolist(), strict=True))
    missing = {
        answer
        for row in found
        for answer in (row[2], row[4])
        if answer is not None and answer not in source_of
    }
    if missing:
        condition, params = sql.any_of("id", sorted(missing))
        source_of.update(
            sql.rows(f"SELECT id, source_id FROM dialogues_answer WHERE {condition}", params)
        )
    return [
        (
            character,
            scenario,
            source_of.get(preferred),
            bool(is_tie),
            source_of.get(guess),
            bool(asked),
            left,
            right,
            pseudonym,
        )
        for character, scenario, preferred, is_tie, guess, asked, left, right, pseudonym in found
    ]
