"""Written-out SQL for the few statements the rating loop runs on every judgment, reads
(selectors) and writes (services) alike.

The ORM builds a query's SQL afresh on every call: about 1–2.5 ms of CPU for one of the
loop's reads on the production machine, against about 0.2 ms for the same statement
written out. With some twenty statements per judgment, building them was the largest
single cost of a judgment (`bench/load.py --profile`), and building a plan's reads
(`services.worklists`) cost some 20 ms of CPU per plan. So the loop's statements and a
plan's reads are written out beside the function that needs them, in SQL that
PostgreSQL and SQLite both run; everything else keeps the ORM.

Table and column names are Django's defaults for the models (`annotation_<model>`,
`<field>_id`). Every written statement runs in the tests of the page that uses it, on
PostgreSQL in CI and on SQLite in `make test-fast`.
"""

import functools
import random as _random
from datetime import UTC, datetime

from django.db import connection, connections
from django.db.models import Model


def rows(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def first_row(sql: str, params=()) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def one_row(sql: str, params=()) -> tuple:
    """The row of a statement that always gives one (counts)."""
    row = first_row(sql, params)
    assert row is not None, sql
    return row


def row_count(sql: str, params=()) -> int:
    """Run a written UPDATE or DELETE; the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def literal(choice: str) -> str:
    """A choice the code defines (a lease's state, a study's status, an item's kind)
    written into a statement as an SQL literal instead of sent as a parameter. On
    PostgreSQL the loop's statements are prepared and, after a few runs, planned once
    for any parameters: such a plan cannot tell that `state = 'active'` picks a handful
    of an annotator's thousands of leases, and scanned the whole table for it (0.8 ms
    per rating page with 6,000 leases, growing with every lease). With the value in the
    text, the database plans with what it knows of it. Never for a value from a
    request."""
    if not choice.isidentifier():
        raise ValueError(f"not a choice the code defines: {choice!r}")
    return f"'{choice}'"


def any_of(column: str, values) -> tuple[str, list]:
    """`column` is one of `values`, as a condition and its parameters: one array on
    PostgreSQL, so that the statement's text is the same for any number of values (it is
    prepared once; see `insert_from`), and a list of parameters on SQLite, which has no
    arrays."""
    values = list(values)
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [values]
    if not values:
        return "1 = 0", []
    return f"{column} IN ({', '.join(['%s'] * len(values))})", values


# SQLite's RANDOM() cannot be seeded: on SQLite the serving order's draws come from this
# generator instead, given to every connection as `serving_random()` (see `random_draw`).
_SQLITE_DRAWS = _random.Random()


def random_draw() -> str:
    """An SQL expression drawing a random number for an ORDER BY. PostgreSQL's random()
    is seeded per session with setseed (`seed_random`); SQLite's own cannot be, so there
    each connection draws from a generator of this process that `seed_random` seeds, and
    a simulated study (or a test's fans) sees the same order on either database."""
    return "RANDOM()" if connection.vendor == "postgresql" else "serving_random()"


def seed_random(seed: int) -> None:
    """Seed `random_draw` for this connection (PostgreSQL) or this process (SQLite)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT setseed(%s)", [(seed % 1000) / 1000])
    else:
        _SQLITE_DRAWS.seed(seed)


def sqlite_functions(sender, connection, **kwargs) -> None:
    """Connected to `connection_created`: what `random_draw` calls on SQLite."""
    if connection.vendor == "sqlite":
        connection.connection.create_function("serving_random", 0, _SQLITE_DRAWS.random)


def db_moment(moment: datetime):
    """A moment as the database compares it (SQLite stores UTC text without a zone)."""
    return connection.ops.adapt_datetimefield_value(moment)


def moment_of(value: datetime | str) -> datetime:
    """A moment read back by a written statement: PostgreSQL gives it with its zone,
    SQLite the UTC moment it stores, without one (and, from an aggregate such as MAX,
    as the text it stores)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def milliseconds_between(later: str, earlier: str) -> str:
    """An SQL expression: the milliseconds from the moment `earlier` to `later`, NULL if
    either is. SQLite's moments are text, compared through their Julian day numbers,
    rounded to the millisecond (a double carries about 40 microseconds of a day)."""
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM ({later}) - ({earlier})) * 1000"
    return f"ROUND((julianday({later}) - julianday({earlier})) * 86400000)"


def columns(model: type[Model], alias: str) -> str:
    """`alias.column, …` for every column of `model`, in the order `instance` reads them."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def parts(values, *models: type[Model]) -> list:
    """A row's values read with `columns` of each of `models` in turn, cut into one part
    per model (for `instance`)."""
    found, start = [], 0
    for model in models:
        width = len(model._meta.concrete_fields)
        found.append(values[start : start + width])
        start += width
    return found


def instance[M: Model](model: type[M], values) -> M:
    """The `model` instance of a row's values read with `columns(model, …)`, converted as
    the ORM converts them (JSON text, SQLite's booleans and moments)."""
    wrapper = connections[connection.alias]
    attnames, converters = _converters(model, wrapper)
    converted = []
    for value, column_converters in zip(values, converters, strict=True):
        for converter, column in column_converters:
            value = converter(value, column, wrapper)
        converted.append(value)
    return model.from_db(wrapper.alias, attnames, converted)


def _converters(model: type[Model], wrapper) -> tuple[list[str], list[list[tuple]]]:
    """The attribute names of `model`'s columns and each column's converters, as the ORM
    finds them for every row it reads; found once per model and connection (each thread
    has its own connection, and a converter may belong to it). Kept on the connection
    itself, so that they go with it: a server that starts a thread per request (the
    development server) makes a connection per thread."""
    kept = wrapper.__dict__.setdefault("chatanime_converters", {})
    if model not in kept:
        kept[model] = _converters_found(model, wrapper)
    return kept[model]


def _converters_found(model: type[Model], wrapper) -> tuple[list[str], list[list[tuple]]]:
    attnames, converters = [], []
    for field in model._meta.concrete_fields:
        column = field.get_col(model._meta.db_table)
        attnames.append(field.attname)
        converters.append(
            [
                (converter, column)
                for converter in wrapper.ops.get_db_converters(column)
                + column.get_db_converters(wrapper)
            ]
        )
    return attnames, converters


def insert(*objs: Model) -> None:
    """Write these new instances of one model in one written INSERT and set their primary
    keys, as `bulk_create` does, without building the statement through the ORM."""
    model = type(objs[0])
    meta = model._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    quote = connection.ops.quote_name
    one_row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    keys = rows(
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
        f" VALUES {', '.join([one_row] * len(objs))} RETURNING {quote(meta.pk.column)}",
        [_db_value(field, obj) for obj in objs for field in fields],
    )
    # The rows come back in the order given, which `bulk_create` relies on too.
    for obj, (key,) in zip(objs, keys, strict=True):
        saved(obj, key)


def _db_value(field, obj: Model):
    """The value a new instance writes to a field's column, as the ORM's own insert
    prepares it: through `pre_save` and `get_db_prep_save` (defaults already set, moments
    of `auto_now_add`, JSON, the database's form of a moment)."""
    return field.get_db_prep_save(field.pre_save(obj, True), connection)


def saved(obj: Model, pk) -> None:
    """Mark a new instance written by a written statement as saved, with its key."""
    obj.pk = pk
    obj._state.adding = False
    obj._state.db = connection.alias


def insert_from(source: str, objs, *, taken: dict[str, str] | None = None) -> tuple[str, list]:
    """A written `INSERT … SELECT` (PostgreSQL) of these new instances of one model, one
    row per instance for each row of `source` (a table or a `WITH` query) and none if it
    has none; `taken` names the columns whose value is an expression over `source`
    (`{"judgment_id": "judgment.id"}`), every other value is the instance's own
    (`_db_value`). Used inside a statement with data-modifying `WITH` queries, where a
    row must be written only if another was, in the same statement.

    The values travel as one array per column, unnested into rows: the statement's text
    and its number of parameters are then the same for any number of rows, so it is
    built once per process and psycopg reuses its parsing of it (it parses afresh any
    statement of more than 50 parameters, such as a judgment's twenty ratings as one
    parameter per value). Each array is cast to its column's type: PostgreSQL cannot
    infer it from the column being written, and an array of NULLs would read as text.
    One instance (a judgment, a lease: twice per judgment) travels as one value per
    column instead: psycopg writes a value in C but an array through Python, and twenty
    arrays of one value took some 15 times the CPU of twenty values."""
    taken = taken or {}
    fields, statement = _insert_from_shape(
        type(objs[0]), source, tuple(taken.items()), one=len(objs) == 1
    )
    if len(objs) == 1:
        return statement, [_db_value(field, objs[0]) for field in fields]
    return statement, [[_db_value(field, obj) for obj in objs] for field in fields]


def insert_columns_from(
    model: type[Model], source: str, columns: dict[str, list], *, taken: dict[str, str]
) -> tuple[str, list]:
    """`insert_from` for rows given column by column, each value already as the database
    stores it (whole numbers, None): a judgment's twenty ratings are three columns of
    numbers, and making a model instance of each only to read its numbers back through
    the fields cost more CPU than the rest of the statement's preparation."""
    fields, statement = _insert_from_shape(model, source, tuple(taken.items()))
    if sorted(field.column for field in fields) != sorted(columns):
        raise ValueError(f"give every column of {model.__name__} but the taken ones")
    return statement, [columns[field.column] for field in fields]


@functools.cache
def _insert_from_shape(
    model: type[Model], source: str, taken: tuple, *, one: bool = False
) -> tuple[list, str]:
    """The fields `insert_from` gives values for and its statement, per model and shape:
    the values of `one` instance, or an array of values per column."""
    meta = model._meta
    taken_columns = dict(taken)
    fields = [f for f in meta.concrete_fields if f is not meta.pk and f.column not in taken_columns]
    quote = connection.ops.quote_name
    columns = [*taken_columns, *(f.column for f in fields)]
    insert = f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(c) for c in columns)})"
    if one:
        values = ", ".join(f"CAST(%s AS {f.db_type(connection)})" for f in fields)
        return (
            fields,
            f"{insert} SELECT {', '.join([*taken_columns.values(), values])} FROM {source}",
        )
    named = ", ".join(f"v{n}" for n in range(len(fields)))
    arrays = ", ".join(f"CAST(%s AS {f.db_type(connection)}[])" for f in fields)
    return fields, (
        f"{insert} SELECT {', '.join([*taken_columns.values(), named])}"
        f" FROM {source}, unnest({arrays}) AS given ({named})"
    )
