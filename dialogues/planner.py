"""PostgreSQL's planner statistics after a bulk load.

The planner chooses how to run a query from its statistics of each table, which
autovacuum refreshes only some time after a table changes (and never on a server run
without it). Just after an import or a study's opening, the tables hold thousands of new
rows the statistics know nothing of, and the first crowd of annotators would be served by
plans made for empty tables: reading an item's answers hashed all 26,400 answers (43 ms)
instead of looking up the few it needs (1 ms). So whoever bulk-loads a table refreshes
its statistics once the load is committed."""

from django.db import connection, transaction


def planner_statistics_refresh(*models) -> None:
    """ANALYZE these models' tables once the current transaction commits (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return

    def analyze():
        with connection.cursor() as cursor:
            for model in models:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")

    transaction.on_commit(analyze)
