"""How long does the study dashboard take on the full published study?

A fresh database with the published dataset imported and the full study open (24,000
pairs), 12,000 judgments by 40 annotators spread over three days (a third of them
flagged), then the dashboard page requested as a study manager (after one warm-up request): the
whole response, aggregate queries and template included. Median of several requests on
SQLite and PostgreSQL.

    .venv/bin/python bench/staff_dashboard.py [--requests 5]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.import_speed import DEFAULT_DATA, manage, postgres_database, run_script

TIMED = """
import random, statistics, time
from datetime import timedelta
import django
django.setup()
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from annotation import services
from annotation.models import Assignment, FlagKind, Item, Judgment, QualityFlag
from dialogues.importer import import_chatanime
from dialogues.models import Character, Source, SourceKind
import_chatanime({data!r})
study = services.study_create(
    name="bench", reference=Source.objects.get(slug="human"),
    compared=list(Source.objects.filter(kind=SourceKind.LLM)), characters=list(Character.objects.all()),
)
services.study_open(study=study)
rng = random.Random(7)
users = [get_user_model().objects.create(username=f"a{{i}}", email=f"a{{i}}@example.com") for i in range(40)]
item_ids = list(Item.objects.filter(study=study).values_list("pk", flat=True))
now = timezone.now()
pairs = {{(rng.choice(item_ids), rng.choice(users).pk) for _ in range(12000)}}
leases = Assignment.objects.bulk_create(
    Assignment(item_id=i, annotator_id=u, state="submitted", display_order=[0, 1],
               served_at=now, expires_at=now) for i, u in pairs)
judgments = Judgment.objects.bulk_create(
    Judgment(item_id=a.item_id, study=study, annotator_id=a.annotator_id, assignment=a,
             seconds_on_task=20,
             submitted_at=now - timedelta(minutes=rng.randrange(3 * 24 * 60))) for a in leases)
QualityFlag.objects.bulk_create(
    QualityFlag(annotator_id=j.annotator_id, study=study, judgment=j, kind=FlagKind.TOO_FAST)
    for j in judgments[::3])
counts = {{}}
for j in judgments:
    counts[j.item_id] = counts.get(j.item_id, 0) + 1
items = Item.objects.in_bulk(list(counts))
for pk, n in counts.items():
    items[pk].judgment_count = n
Item.objects.bulk_update(items.values(), ["judgment_count"], batch_size=2000)
manager = get_user_model().objects.create(username="m", email="m@example.com", is_staff=True)
client = Client(HTTP_HOST="127.0.0.1")
client.force_login(manager)
client.get(f"/staff/studies/{{study.slug}}/")  # templates compiled, URLs loaded
seconds = []
for _ in range({requests}):
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(f"/staff/studies/{{study.slug}}/")
    seconds.append(time.perf_counter() - started)
    assert response.status_code == 200
print(statistics.median(seconds), min(seconds), max(seconds), len(queries), Item.objects.filter(study=study).count(), len(judgments))
"""


def time_dashboard(database_url: str, data: Path, requests: int) -> list[str]:
    return run_script(database_url, TIMED.format(data=str(data), requests=requests)).split()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    pg_base = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    name = "chatanime_bench_dashboard"
    with tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": f"sqlite:///{tmp}/dashboard.sqlite3"}
        if not args.sqlite_only:
            url = postgres_database(pg_base, name)
            if url is not None:
                backends["postgresql"] = url
        for backend, url in backends.items():
            manage(url, "migrate", "--noinput")
            median, low, high, queries, items, judgments = time_dashboard(
                url, args.data, args.requests
            )
            print(
                f"{backend:<11} dashboard ({items} items, {judgments} judgments, {queries} queries)"
                f"  median {float(median) * 1000:.0f} ms  min {float(low) * 1000:.0f} ms"
                f"  max {float(high) * 1000:.0f} ms  (n={args.requests})"
            )
            if backend == "postgresql":
                postgres_database(pg_base, name, create=False)


if __name__ == "__main__":
    main()
