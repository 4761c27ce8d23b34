"""The study dashboard's throughput chart: judgments per hour or per day, counted in the
database without a Python call per judgment, and the same counts whichever way."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.db.models.functions import TruncDay, TruncHour
from django.db.utils import ConnectionHandler
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation import selectors
from annotation.models import Judgment
from annotation.selectors.studies import _DayOf, _HourOf
from tests.builders import lease_pair
from tests.helpers import submit

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 10, 12, 30, tzinfo=UTC)


def judgments_at(user, moments):
    for moment in moments:
        judgment = submit(user, lease_pair(user))
        Judgment.objects.filter(pk=judgment.pk).update(submitted_at=moment)


def expected(moments, unit):
    """Judgments per bucket counted in Python from the times themselves (UTC)."""
    floor = {"hour": dict(minute=0), "day": dict(hour=0, minute=0)}[unit]
    return Counter(m.replace(second=0, microsecond=0, **floor) for m in moments)


def shown(throughput, unit):
    """The chart's non-empty buckets by their labels (an hour's label has no year)."""
    counts = {}
    for label, count in zip(throughput["labels"], throughput["counts"], strict=True):
        if unit == "hour":
            moment = datetime.strptime(f"{NOW.year}-{label}", "%Y-%m-%d %H:00")
        else:
            moment = datetime.strptime(label, "%Y-%m-%d")
        if count:
            counts[moment.replace(tzinfo=UTC)] = count
    return counts


def test_the_hourly_chart_counts_each_judgment_in_its_hour(study, alice):
    # On an hour, a microsecond before one, and several within one hour.
    moments = [
        NOW - timedelta(hours=50),
        NOW.replace(minute=0),
        NOW.replace(minute=0) - timedelta(microseconds=1),
        NOW - timedelta(hours=3, minutes=1),
        NOW - timedelta(hours=3, minutes=2, seconds=59, microseconds=999999),
        NOW - timedelta(minutes=1),
    ]
    judgments_at(alice, moments)

    throughput = selectors.study_throughput(study, now=NOW)

    assert throughput["unit"] == "hour"
    assert shown(throughput, "hour") == expected(moments, "hour")
    assert len(throughput["labels"]) == 51


def test_the_daily_chart_counts_each_judgment_in_its_day(study, alice):
    midnight = NOW.replace(hour=0, minute=0)
    moments = [
        NOW - timedelta(days=6),
        midnight - timedelta(days=2),
        midnight - timedelta(microseconds=1),
        midnight,
        NOW,
    ]
    judgments_at(alice, moments)

    throughput = selectors.study_throughput(study, now=NOW)

    assert throughput["unit"] == "day"
    assert shown(throughput, "day") == expected(moments, "day")
    assert len(throughput["labels"]) == 7


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the suite's database is SQLite")
def test_on_the_suites_sqlite_the_dashboard_counts_hours_in_the_database(study, alice):
    judgments_at(alice, [NOW - timedelta(hours=2)])

    with CaptureQueriesContext(connection) as queries:
        selectors.study_throughput(study, now=NOW)

    statements = " ".join(query["sql"] for query in queries.captured_queries)
    assert "strftime" in statements
    assert "django_datetime_trunc" not in statements


@pytest.fixture
def sqlite():
    """A SQLite connection of its own, whatever database the suite runs on (CI runs it
    on PostgreSQL, where the truncation is the database's own): what `make run` uses."""
    connection = ConnectionHandler(
        {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    )["default"]
    yield connection
    connection.close()


def test_on_sqlite_the_hours_are_counted_without_a_python_call_per_judgment(sqlite):
    for bucket in (_HourOf, _DayOf):
        query = Judgment.objects.annotate(bucket=bucket("submitted_at")).values("bucket").query

        statement, _params = query.get_compiler(connection=sqlite).as_sql()

        assert "strftime" in statement
        assert "django_datetime_trunc" not in statement


@pytest.mark.parametrize(
    "stored", ["2026-03-10 12:59:59.999999", "2026-03-10 13:00:00", "2026-12-31 23:00:00.000001"]
)
def test_on_sqlite_the_database_truncates_stored_times_as_djangos_function_does(sqlite, stored):
    """Stored as SQLite holds Django's times (UTC text, microseconds when there are any)."""
    with sqlite.cursor() as cursor:
        for bucket, unit in ((_HourOf, "hour"), (_DayOf, "day")):
            cursor.execute(
                "SELECT strftime(%s, %s), django_datetime_trunc(%s, %s, 'UTC', 'UTC')",
                [bucket.sqlite_format, stored, unit, stored],
            )
            ours, djangos = cursor.fetchone()
            assert ours == djangos


@pytest.mark.parametrize("zone", ["UTC", "Asia/Shanghai", "Asia/Kolkata"])
def test_the_buckets_are_djangos_in_any_time_zone(study, alice, zone):
    moments = [
        NOW.replace(hour=15, minute=59),
        NOW.replace(hour=16, minute=0),
        NOW.replace(hour=18, minute=29, second=59),
        NOW.replace(hour=18, minute=30),
    ]
    judgments_at(alice, moments)
    judgments = Judgment.objects.filter(study=study)

    with timezone.override(zone):
        for ours, djangos in ((_HourOf, TruncHour), (_DayOf, TruncDay)):
            counted = {
                bucket: n
                for bucket, n in judgments.annotate(bucket=ours("submitted_at"))
                .values_list("bucket")
                .annotate(n=Count("pk"))
            }
            reference = {
                bucket: n
                for bucket, n in judgments.annotate(bucket=djangos("submitted_at"))
                .values_list("bucket")
                .annotate(n=Count("pk"))
            }
            assert counted == reference
