"""annotation.sql.insert_from: the rows it writes are the instances given, with every
column type the loop writes (keys, NULLs, JSON, text, moments), and none when its source
has no row; insert_columns_from, the same for rows given column by column. PostgreSQL
only: SQLite's submissions take the statements one by one."""

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.utils import timezone

from annotation import services, sql
from annotation.models import FlagKind, QualityFlag, Rating
from tests.builders import lease_pair
from tests.helpers import pair_submission

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


RESOLVED_AT = timezone.now()


def flags_for(annotator, study):
    """Resolved flags: several of one kind may be stored only once resolved."""
    return [
        QualityFlag(
            annotator=annotator,
            study=study,
            kind=FlagKind.TOO_FAST,
            figures=figures,
            resolved_at=RESOLVED_AT,
        )
        for figures in ({"seconds": 3.5, "minimum": 10}, {}, {"words": ["ルフィ", "路飞"]})
    ]


def written(source: str, flags) -> list[QualityFlag]:
    statement, params = sql.insert_from(source, flags, taken={"resolved_by_id": "source.user_id"})
    with connection.cursor() as cursor:
        cursor.execute(f"{statement} RETURNING id", params)
        ids = [row[0] for row in cursor.fetchall()]
    return list(QualityFlag.objects.filter(pk__in=ids).order_by("pk"))


def test_the_rows_written_are_the_instances_given(postgres, alice, study):
    flags = flags_for(alice, study)
    source = f"(SELECT {alice.pk} AS user_id) AS source"

    rows = written(source, flags)

    def seen(flag):
        return {k: v for k, v in model_to_dict(flag).items() if k not in ("id", "resolved_by")}

    assert [seen(row) for row in rows] == [seen(flag) for flag in flags]
    assert {row.resolved_by_id for row in rows} == {alice.pk}
    assert all(row.resolved_at == RESOLVED_AT and row.judgment_id is None for row in rows)
    assert all(abs(row.created_at - timezone.now()).total_seconds() < 60 for row in rows)


def test_a_source_without_rows_writes_nothing(postgres, alice, study):
    source = f"(SELECT {alice.pk} AS user_id WHERE false) AS source"

    assert written(source, flags_for(alice, study)) == []
    assert not QualityFlag.objects.exists()


def test_one_statement_serves_any_number_of_rows(postgres, alice, study):
    """Its text does not grow with the rows (psycopg keeps its parsing of it): one text
    for a single row, a value per column, and one for any more, an array per column."""
    flags = flags_for(alice, study)

    one, one_params = sql.insert_from("source", flags[:1])
    two, _ = sql.insert_from("source", flags[:2])
    three, params = sql.insert_from("source", flags)

    assert two == three and all(len(values) == 3 for values in params)
    assert one != three and len(one_params) == len(params)
    assert not any(isinstance(value, list) for value in one_params)


def test_a_single_row_is_written_as_the_instance_given_or_not_at_all(postgres, alice, study):
    source = f"(SELECT {alice.pk} AS user_id) AS source"
    nothing = f"(SELECT {alice.pk} AS user_id WHERE false) AS source"

    def seen(flag):
        return {k: v for k, v in model_to_dict(flag).items() if k not in ("id", "resolved_by")}

    for flag in flags_for(alice, study):  # moments, NULLs, JSON with Japanese and Chinese
        assert written(nothing, [flag]) == []
        (row,) = written(source, [flag])
        assert seen(row) == seen(flag) and row.resolved_by_id == alice.pk


def test_rows_given_by_column_are_written_as_given(postgres, alice, study):
    judgment = services.judgment_submit(
        user=alice, token=lease_pair(alice).token, submission=pair_submission()
    )
    given = list(judgment.ratings.order_by("pk").values_list("answer_id", "metric_id", "value"))
    judgment.ratings.all().delete()
    changed = [(answer, metric, 6 - value) for answer, metric, value in given]

    statement, params = sql.insert_columns_from(
        Rating,
        "given_judgment",
        {
            "answer_id": [answer for answer, _metric, _value in changed],
            "metric_id": [metric for _answer, metric, _value in changed],
            "value": [value for _answer, _metric, value in changed],
        },
        taken={"judgment_id": "given_judgment.id"},
    )
    with connection.cursor() as cursor:
        cursor.execute(f"WITH given_judgment AS (SELECT {judgment.pk} AS id) {statement}", params)

    written = judgment.ratings.order_by("pk").values_list("answer_id", "metric_id", "value")
    assert sorted(written) == sorted(changed)


@pytest.mark.parametrize(
    "columns",
    [
        {"answer_id": [1], "metric_id": [1]},  # one missing
        {"answer_id": [1], "metric_id": [1], "value": [3], "judgment_id": [1]},  # a taken one
    ],
)
def test_columns_that_are_not_the_rows_columns_are_refused(postgres, columns):
    with pytest.raises(ValueError, match="every column of Rating"):
        sql.insert_columns_from(
            Rating, "given_judgment", columns, taken={"judgment_id": "given_judgment.id"}
        )
