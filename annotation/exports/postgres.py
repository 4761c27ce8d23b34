"""The long CSV straight from PostgreSQL's COPY: the same bytes as the Python rows of
`rows.py`, an order of magnitude faster, and streamed in chunks.

Every value is formatted in SQL the way `rows.py` and `csv.writer` format it:

- text that starts like a formula gets an apostrophe (`neutralise`);
- an empty text is written as NULL, because COPY quotes empty strings (`""`) to tell
  them from NULL, while csv.writer writes nothing for both;
- booleans are `True`/`False`, timestamps ISO 8601 UTC with microseconds, time on task
  to the millisecond without trailing zeros (`12.5`, `30.0`).

COPY's CSV quoting is csv.writer's QUOTE_MINIMAL: a value is quoted when it holds a
comma, a double quote or a line break, and a quote is doubled.
"""

from collections.abc import Iterator

from django.db import connection
from psycopg import sql

from ..models import COUNTED_JUDGMENT_SQL
from .rows import FORMULA_STARTS

CHUNK_BYTES = 256 * 1024
# The same characters as `neutralise`'s, written as chr() so that the tab and carriage
# return do not break the statement's single line.
_FORMULA_STARTS = ", ".join(f"chr({ord(start)})" for start in FORMULA_STARTS)


def _text(expression: str) -> str:
    """A text column as `neutralise` leaves it, empty as NULL."""
    return (
        f"NULLIF(CASE WHEN left({expression}, 1) IN ({_FORMULA_STARTS}) "
        f"THEN '''' || {expression} ELSE {expression} END, '')"
    )


def _boolean(expression: str) -> str:
    return f"CASE WHEN {expression} THEN 'True' ELSE 'False' END"


_SECONDS = "trim_scale(round(j.seconds_on_task::text::numeric, 3))::text"

# A diversity set is rated as a whole: its source is the set's (`ds`).
# No SQL comments in here: psql's \copy needs the statement on one line.
LONG_SELECT = f"""
SELECT
    {_text("st.slug")},
    i.id,
    j.id,
    {_text("p.pseudonym")},
    {_text("c.key")},
    sc.number,
    i.round,
    {_text("CASE WHEN i.kind = 'diversity' THEN ds.slug ELSE s.slug END")},
    {_text("CASE WHEN i.kind = 'diversity' THEN ds.kind ELSE s.kind END")},
    CASE WHEN i.kind = 'diversity' THEN 'set'
         WHEN a.source_id = asg.left_source_id THEN 'left' ELSE 'right' END,
    {_text("m.slug")},
    r.value,
    CASE WHEN i.kind = 'diversity' THEN NULL
         WHEN j.is_tie THEN 'tie' ELSE {_text("ps.slug")} END,
    CASE WHEN strpos({_SECONDS}, '.') = 0 THEN {_SECONDS} || '.0' ELSE {_SECONDS} END,
    to_char(j.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    CASE WHEN j.human_guess_asked THEN {_text("COALESCE(gs.slug, 'unsure')")} END,
    {_text("j.comment")},
    {_boolean("j.simulated")},
    {_boolean("j.excluded")},
    {_boolean("i.is_gold")},
    {_boolean(COUNTED_JUDGMENT_SQL)},
    r.answer_id,
    i.character_id,
    i.scenario_id,
    to_char(asg.served_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    CASE WHEN gc.passed IS NOT NULL THEN {_boolean("gc.passed")} END,
    (SELECT string_agg(f.kind, ';' ORDER BY f.kind COLLATE "C")
     FROM annotation_qualityflag f WHERE f.judgment_id = j.id AND f.resolved_at IS NULL)
FROM annotation_rating r
JOIN annotation_judgment j ON j.id = r.judgment_id
JOIN annotation_item i ON i.id = j.item_id
JOIN annotation_study st ON st.id = i.study_id
JOIN annotation_assignment asg ON asg.id = j.assignment_id
JOIN annotation_metric m ON m.id = r.metric_id
JOIN dialogues_character c ON c.id = i.character_id
LEFT JOIN dialogues_scenario sc ON sc.id = i.scenario_id
LEFT JOIN annotation_annotatorprofile p ON p.user_id = j.annotator_id
LEFT JOIN dialogues_answer a ON a.id = r.answer_id
LEFT JOIN dialogues_source s ON s.id = a.source_id
LEFT JOIN dialogues_answer pa ON pa.id = j.preferred_answer_id
LEFT JOIN dialogues_source ps ON ps.id = pa.source_id
LEFT JOIN dialogues_answer ga ON ga.id = j.human_guess_id
LEFT JOIN dialogues_source gs ON gs.id = ga.source_id
LEFT JOIN annotation_goldcheck gc ON gc.judgment_id = j.id
LEFT JOIN dialogues_source ds ON ds.id = i.diversity_source_id
WHERE {{conditions}}
ORDER BY j.id, r.answer_id, m.position, r.id
"""


def long_select(study_id: int | None = None, include_excluded: bool = False) -> sql.Composed:
    """The SELECT behind the long CSV, for COPY here and for `psql \\copy` in the bench."""
    conditions = [sql.SQL("TRUE")]
    if study_id is not None:
        conditions.append(sql.SQL("i.study_id = {}").format(sql.Literal(int(study_id))))
    if not include_excluded:
        conditions.append(sql.SQL("NOT j.excluded"))
    return sql.SQL(LONG_SELECT).format(conditions=sql.SQL(" AND ").join(conditions))


def long_csv_chunks(study_id: int | None = None, include_excluded: bool = False):
    """(bytes, rows) chunks of the long CSV without its header, whole rows per chunk."""
    statement = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT csv)").format(
        long_select(study_id, include_excluded)
    )
    connection.ensure_connection()
    raw = connection.connection
    with raw.cursor() as cursor:
        # Shortest exact float text (the default since PostgreSQL 12), which the
        # seconds' rounding starts from, like Python's repr.
        cursor.execute("SET extra_float_digits = 1")
        with cursor.copy(statement) as copy:
            yield from _batched(copy)


def _batched(copy) -> Iterator[tuple[bytes, int]]:
    # COPY sends one message per row; batching them keeps writes and HTTP chunks large.
    buffer, rows = bytearray(), 0
    for data in copy:
        buffer += data
        rows += 1
        if len(buffer) >= CHUNK_BYTES:
            yield bytes(buffer), rows
            buffer, rows = bytearray(), 0
    if buffer:
        yield bytes(buffer), rows
