"""The study dashboard's throughput chart: judgments per hour or per day, counted in the
database without a Python call per judgment, and the same counts whichever way."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.db.models.functions import TruncDay, TruncHour
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


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's own date functions")
def test_on_sqlite_the_hours_are_counted_without_a_python_call_per_judgment(study, alice):
    judgments_at(alice, [NOW - timedelta(hours=2)])

    with CaptureQueriesContext(connection) as queries:
        selectors.study_throughput(study, now=NOW)

    statements = " ".join(query["sql"] for query in queries.captured_queries)
    assert "strftime" in statements
    assert "django_datetime_trunc" not in statements


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
