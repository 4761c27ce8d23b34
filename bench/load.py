"""Load test of the annotator loop on a production-shaped stack on this machine.

gunicorn (production settings, behind a pretend TLS proxy), PostgreSQL, Redis and a Celery
worker recomputing results as judgments arrive; the published dataset imported and the full
study open (24,000 pairs). locust, headless, runs 10, 50 and 200 concurrent annotators, each
in a closed loop (next item, rate nine metrics, submit; no pause: the platform's capacity),
then 200 annotators who pause about 30 s between items (a fast human crowd); the table
shows throughput, median / p95 / p99 latency and the error rate per level. Before that, the
queries each annotator page makes are counted in-process.

    make bench-load            # or: .venv/bin/python bench/load.py [--users 10,50,200]

Needs the bench requirements (requirements/bench.lock: locust), which `make bench-load`
installs. Uses its own scratch database, dropped at the end unless --keep.
"""

import argparse
import csv
import json
import os
import secrets
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

VENV_BIN = Path(sys.executable).parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = "chatanime_bench_load"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def admin_execute(*statements):
    import psycopg

    with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True) as c:
        for statement in statements:
            c.execute(statement)


def csrf_secret() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(32))


def prepare(args, host) -> dict:
    """Import the data, open the study, create approved annotators with live sessions."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation import services
    from annotation.metric_definitions import PAIR_METRIC_SLUGS
    from annotation.models import Assignment, ProfileStatus, Qualification
    from dialogues.importer import import_chatanime
    from dialogues.models import Character, Source, SourceKind

    import_chatanime(args.data)
    study = services.study_create(
        name="Load",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
    )
    items = services.study_open(study=study)
    characters = list(Character.objects.all())
    accounts = []
    users = max([*args.users, *(u for u, _ in args.crowd)])
    for n in range(users + 1):
        user = services.account_ensure(email=f"load{n}@example.com", password="load-password")
        profile = services.consent_give(user=user)
        Qualification.objects.bulk_create(
            Qualification(profile=profile, character=c, status="approved") for c in characters
        )
        profile.status = ProfileStatus.APPROVED
        profile.save()
        client = Client()
        client.force_login(user)
        accounts.append({"session": client.cookies["sessionid"].value, "csrf": csrf_secret()})

    # Queries per annotator page, counted in-process with the last account.
    user = get_user_model().objects.get(email=f"load{users}@example.com")
    client = Client(headers={"X-Forwarded-Proto": "https"})
    client.force_login(user)
    form = {f"{p}-{slug}": "4" for p in "ab" for slug in PAIR_METRIC_SLUGS}
    form["preference"] = "tie"

    def count(method, url, **kwargs):
        with CaptureQueriesContext(connection) as queries:
            response = getattr(client, method)(url, secure=True, **kwargs)
        assert response.status_code in (200, 302), (url, response.status_code)
        return len(queries)

    queries = {"home": count("get", "/"), "screening hub": count("get", "/screening/")}
    queries["next item (redirect)"] = count("get", "/annotate/")
    token = Assignment.objects.get(annotator=user, state="active").token
    queries["rating page"] = count("get", f"/annotate/{token}/")
    queries["submit + next item"] = count(
        "post", f"/annotate/{token}/", data=form, headers={"HX-Request": "true"}
    )
    token = Assignment.objects.get(annotator=user, state="active").token
    queries["skip + next item"] = count(
        "post", f"/annotate/{token}/skip/", data={"reason": "unclear"}
    )
    connection.close()
    return {
        "items": items,
        "queries": queries,
        "accounts": {"host": host, "metrics": PAIR_METRIC_SLUGS, "annotators": accounts[:-1]},
    }


def wait_until_up(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not come up")


def judgments_saved() -> int:
    import psycopg

    url = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}".replace("postgres://", "postgresql://")
    with psycopg.connect(url) as c:
        return c.execute("SELECT count(*) FROM annotation_judgment").fetchone()[0]


def run_level(users, seconds, host, accounts_file, out_dir, think=0.0, spawn_rate=50) -> dict:
    prefix = out_dir / f"u{users}-t{think:g}"
    before = judgments_saved()
    subprocess.run(
        [
            str(VENV_BIN / "locust"),
            "-f",
            str(REPO / "bench" / "locustfile.py"),
            "--headless",
            "--only-summary",
            "--users",
            str(users),
            "--spawn-rate",
            str(min(users, spawn_rate)),
            "--run-time",
            f"{seconds}s",
            "--reset-stats",
            "--host",
            f"http://{host}",
            "--csv",
            str(prefix),
            "--loglevel",
            "WARNING",
        ],
        env=dict(os.environ, LOAD_ACCOUNTS=str(accounts_file), LOAD_THINK_SECONDS=str(think)),
        check=False,
        capture_output=True,
    )
    with open(f"{prefix}_stats.csv", encoding="utf-8") as stats:
        rows = {row["Name"]: row for row in csv.DictReader(stats)}
    total = rows["Aggregated"]
    submits = rows.get("submit + next item", {})
    requests = int(total["Request Count"])
    return {
        "users": users,
        "think": think,
        "rps": float(total["Requests/s"]),
        "judgments_per_s": float(submits.get("Requests/s", 0) or 0),
        "median": float(submits.get("Median Response Time") or 0),
        "p95": float(submits.get("95%") or 0),
        "p99": float(submits.get("99%") or 0),
        "errors": int(total["Failure Count"]) / requests if requests else 1.0,
        "saved": judgments_saved() - before,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="10,50,200", help="concurrency levels")
    parser.add_argument("--seconds", type=int, default=45, help="measured seconds per level")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument(
        "--crowd",
        default="200:30",
        help="extra levels with think time, users:seconds between submissions ('' for none)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    args.users = [int(n) for n in args.users.split(",")]
    args.crowd = [
        (int(users), float(think))
        for users, think in (level.split(":") for level in args.crowd.split(",") if level)
    ]

    port = free_port()
    host = f"127.0.0.1:{port}"
    admin_execute(f'DROP DATABASE IF EXISTS "{DATABASE}"', f'CREATE DATABASE "{DATABASE}"')
    env = {
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,testserver",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}",
        "REDIS_URL": REDIS_URL,
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    sys.path.insert(0, str(REPO))
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=REPO, check=True, capture_output=True
        )
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    started = time.perf_counter()
    prepared = prepare(args, host)
    print(
        f"prepared in {time.perf_counter() - started:.0f} s: {prepared['items']} items, "
        f"{len(prepared['accounts']['annotators'])} approved annotators"
    )

    out_dir = Path(tempfile.mkdtemp(prefix="chatanime-load-"))
    accounts_file = out_dir / "accounts.json"
    accounts_file.write_text(json.dumps(prepared["accounts"]))
    gunicorn_log = open(out_dir / "gunicorn.log", "w")  # noqa: SIM115 (closed at exit)
    worker_log = open(out_dir / "worker.log", "w")  # noqa: SIM115
    processes = [
        subprocess.Popen(
            [
                str(VENV_BIN / "gunicorn"),
                "chatanime_site.wsgi:application",
                "--bind",
                host,
                "--workers",
                str(args.workers),
                "--threads",
                str(args.threads),
                "--timeout",
                "60",
                "--backlog",
                "2048",
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=gunicorn_log,
            start_new_session=True,
        ),
        subprocess.Popen(
            [
                str(VENV_BIN / "celery"),
                "-A",
                "chatanime_site",
                "worker",
                "--concurrency",
                "1",
                "--loglevel",
                "WARNING",
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=worker_log,
            start_new_session=True,
        ),
    ]
    try:
        wait_until_up(f"http://{host}/health/")
        results = [
            run_level(users, args.seconds, host, accounts_file, out_dir) for users in args.users
        ] + [
            # People arrive over a minute or so, not all in the same second, and the
            # crowd is watched for longer so that it settles into its rhythm.
            run_level(users, 2 * args.seconds, host, accounts_file, out_dir, think, spawn_rate=3)
            for users, think in args.crowd
        ]
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(timeout=30)

    print(
        f"\ngunicorn {args.workers} workers × {args.threads} threads, 1 Celery worker, "
        f"PostgreSQL, Redis; {args.seconds} s per level after ramp-up; latency of "
        "'submit + next item'"
    )
    header = (
        f"{'annotators':>10}{'think s':>8}{'req/s':>8}{'judgments/s':>13}{'median ms':>11}"
        f"{'p95 ms':>8}{'p99 ms':>8}{'errors':>8}{'saved':>8}"
    )
    print(header)
    for r in results:
        report(
            f"load: {r['users']} annotators"
            + (f", {r['think']:g} s between items" if r["think"] else ", no pause"),
            "gunicorn + PostgreSQL + Redis + worker",
            f"{r['judgments_per_s']:.1f} judgments/s, {r['median']:.0f}/{r['p95']:.0f}/{r['p99']:.0f} ms "
            f"p50/p95/p99, {r['errors']:.2%} errors",
        )
        print(
            f"{r['users']:>10}{r['think']:>8g}{r['rps']:>8.1f}{r['judgments_per_s']:>13.1f}{r['median']:>11.0f}"
            f"{r['p95']:>8.0f}{r['p99']:>8.0f}{r['errors']:>8.2%}{r['saved']:>8}"
        )
    print("\nqueries per annotator page")
    for page, n in prepared["queries"].items():
        print(f"  {page:<24}{n:>4}")
    print(f"\nlogs: {out_dir}")
    if not args.keep:
        admin_execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')


if __name__ == "__main__":
    main()
