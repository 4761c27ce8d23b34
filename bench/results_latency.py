"""Seconds from a judgment being saved to the leaderboard counting it, with a real Celery
worker on Redis and PostgreSQL.

Sets up a scratch PostgreSQL database with the demo data and an open study, starts a
`celery worker`, then submits judgments one at a time (as an annotator would, through
the same service) and waits until the stored results include each one. Prints the
median and the spread over the runs. Submissions within the debounce window share one
refresh, so a single judgment waits at least RESULTS_REFRESH_DEBOUNCE_SECONDS.

    .venv/bin/python bench/results_latency.py [--runs 7]
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

SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = "chatanime_bench_latency_results"
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")


def database(drop_only=False):
    import psycopg

    with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')
        if not drop_only:
            c.execute(f'CREATE DATABASE "{DATABASE}"')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    database()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "DATABASE_URL": f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}",
        "REDIS_URL": REDIS,
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [sys.executable, "manage.py", "import_chatanime", "dialogues/demo_data"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from tests.fixtures.services import running_worker

    try:
        # The worker answers a ping before the first judgment is submitted.
        with running_worker(
            database_url=env["DATABASE_URL"], redis_url=REDIS, queues=["celery"], loglevel="WARNING"
        ):
            from annotation import services
            from annotation.metric_definitions import PAIR_METRIC_SLUGS
            from annotation.models import StudyResults
            from dialogues.models import Character, Source, SourceKind
            from tests.builders import approved_annotator

            study = services.study_create(
                name="Latency",
                reference=Source.objects.get(slug="human"),
                compared=list(Source.objects.filter(kind=SourceKind.LLM)),
                characters=list(Character.objects.all()),
            )
            services.study_open(study=study)
            samples = []
            for run in range(args.runs):
                annotator = approved_annotator(
                    f"latency{run}@example.com", list(Character.objects.all())
                )
                lease = services.assignment_next(user=annotator)
                while lease.item.kind != "pair":
                    services.assignment_skip(user=annotator, token=lease.token, reason="pairs only")
                    lease = services.assignment_next(user=annotator)
                ratings = {(p, m): 4 for p in "ab" for m in PAIR_METRIC_SLUGS}
                started = time.perf_counter()
                services.judgment_submit(
                    user=annotator,
                    token=lease.token,
                    submission=services.Submission(ratings=ratings, preference="a"),
                )
                while not StudyResults.objects.filter(study=study, judgments__gte=run + 1).exists():
                    if time.perf_counter() - started > 120:
                        sys.exit("the worker did not refresh the results within 120 s")
                    time.sleep(0.05)
                samples.append(time.perf_counter() - started)
                time.sleep(2.5)  # past the debounce window, so each run gets its own refresh
            report(
                "judgment saved -> leaderboard updated",
                "real worker",
                f"{statistics.median(samples):.2f} s median",
            )
            print(
                f"judgment saved -> leaderboard updated: median {statistics.median(samples):.2f} s, "
                f"min {min(samples):.2f} s, max {max(samples):.2f} s (n={len(samples)})"
            )
    finally:
        from django.db import connection

        connection.close()
        database(drop_only=True)


if __name__ == "__main__":
    main()
