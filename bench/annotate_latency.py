"""Next-item and submit latency of the rating screen, on PostgreSQL with the published
dataset imported and a full study open (10 LLMs vs human, 20 characters, both rounds:
24,000 pairs).

Requests go through Django's full request stack in-process (middleware, sessions, views,
templates, database), so the figures exclude only the network and the WSGI server.
Results refreshes are queued on Redis as in production, not computed in the request.
Prints median and p95 in milliseconds and the queries each request makes.

    .venv/bin/python bench/annotate_latency.py [--requests 200] [--annotators 20]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_bench_latency")


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def recreate_database():
    import psycopg

    admin = SERVER.replace("postgres://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')
        connection.execute(f'CREATE DATABASE "{DATABASE}"')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="judgments to submit")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--profile", action="store_true", help="also print where submit + next spends its time"
    )
    args = parser.parse_args()

    recreate_database()
    os.environ["DATABASE_URL"] = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chatanime_site.settings.local")
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver"
    os.environ["DJANGO_LOG_LEVEL"] = "WARNING"
    # Results refreshes go to a broker, as in production (no worker consumes them here),
    # so that the figures are the annotator's wait and not the aggregation's.
    os.environ["REDIS_URL"] = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation import services
    from annotation.metric_definitions import PAIR_METRIC_SLUGS
    from annotation.models import Assignment, ItemKind, ProfileStatus, Qualification
    from dialogues.importer import import_chatanime
    from dialogues.models import Character, Source, SourceKind

    started = time.perf_counter()
    import_chatanime(args.data)
    imported = time.perf_counter() - started
    study = services.study_create(
        name="Latency",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
    )
    started = time.perf_counter()
    items = services.study_open(study=study)
    opened = time.perf_counter() - started

    characters = list(Character.objects.all())
    clients = []
    for n in range(args.annotators):
        user = services.account_ensure(email=f"bench{n}@example.com", password="bench-password")
        profile = services.consent_give(user=user)
        Qualification.objects.bulk_create(
            Qualification(profile=profile, character=c, status="approved") for c in characters
        )
        profile.status = ProfileStatus.APPROVED
        profile.save()
        client = Client()
        client.force_login(user)
        clients.append((user, client))

    form = {f"{p}-{slug}": "4" for p in "ab" for slug in PAIR_METRIC_SLUGS}
    form["preference"] = "tie"
    next_ms, submit_ms, next_queries, submit_queries = [], [], [], []
    import cProfile

    profiler = cProfile.Profile()
    for i in range(args.requests):
        user, client = clients[i % len(clients)]
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get("/annotate/", follow=True)
            next_ms.append(1000 * (time.perf_counter() - started))
        assert response.status_code == 200, response.status_code
        next_queries.append(len(queries))
        lease = Assignment.objects.get(annotator=user, state="active")
        assert lease.item.kind == ItemKind.PAIR
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            if args.profile:
                profiler.enable()
            response = client.post(
                f"/annotate/{lease.token}/", form, headers={"HX-Request": "true"}
            )
            if args.profile:
                profiler.disable()
            submit_ms.append(1000 * (time.perf_counter() - started))
        assert response.status_code == 200, response.content[:300]
        submit_queries.append(len(queries))

    print(
        f"PostgreSQL, {items} items in the study, {args.annotators} annotators, {args.requests} judgments"
    )
    print(
        f"import of the dataset: {imported:.2f} s; opening the study (item generation): {opened:.2f} s"
    )
    print(f"{'request':<40}{'median ms':>10}{'p95 ms':>10}{'queries':>10}")
    for name, samples, queries in (
        ("next item (GET /annotate/ + redirect)", next_ms, next_queries),
        ("submit + next item (htmx POST)", submit_ms, submit_queries),
    ):
        report(
            name,
            "in-process, PostgreSQL",
            f"{statistics.median(samples):.0f} ms median, {percentile(samples, 0.95):.0f} ms p95, "
            f"{statistics.median(queries):.0f} queries",
        )
        print(
            f"{name:<40}{statistics.median(samples):>10.1f}{percentile(samples, 0.95):>10.1f}"
            f"{statistics.median(queries):>10.0f}"
        )
    if args.profile:
        import pstats

        print("\nsubmit + next, in-process profile (cumulative):")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(
            r"annotation|django/db/models/sql/compiler|django/template/base|psycopg"
        )
    import redis

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    if not args.keep:
        connection.close()
        import psycopg

        with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')


if __name__ == "__main__":
    main()
