"""CPU of the annotator's loop per judgment, in-process, without a load generator: the
web process's own CPU and that of its PostgreSQL backend, read from the kernel.

`bench/load.py` measures the loop as annotators meet it, but its figures move by about
a tenth from one run to the next on a two-core machine, too much to tell a change of a
few percent. Here one process plays `--annotators` annotators in turn (submit, receive
the next item), `--judgments` cycles each, on a copy of a database that `bench/load.py
--keep` left behind (the full study open, annotators who have already rated hundreds of
items each, so that what grows with an annotator's history shows); each run starts from
a fresh copy, with the cache emptied. The figures are medians over `--repeat` runs.
There is no results worker and no concurrency: this is the cost of the loop's own code
and statements, not of the machine under load.

    .venv/bin/python bench/load.py --users 10 --crowd '' --seconds 50 --keep
    .venv/bin/python bench/loop_cpu.py --repeat 3

To compare two commits, give the other checkout with `--against DIR` (a `git worktree`):
the runs alternate between the two, each on a fresh copy migrated by the checkout it
measures, and the medians of both are printed with their ratio. On a shared two-core
machine the same code's figures drift by a tenth or more within minutes; only runs that
alternate can tell a change of a few percent from that drift.

    git worktree add /tmp/before HEAD~1
    .venv/bin/python bench/loop_cpu.py --repeat 3 --against /tmp/before
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench import load_stack  # noqa: E402
from bench.load_stack import admin_execute  # noqa: E402

# The server of bench/load.py's databases, without a database name.
SERVER = load_stack.SERVER.rsplit("/", 1)[0].replace("postgres://", "postgresql://")
REDIS_URL = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379/9")
SCRATCH = "chatanime_bench_loop_cpu"
TOKEN = re.compile(rb'action="/annotate/([A-Za-z0-9_-]+)/"')


def fresh_copy(template: str, case: str, code: Path = REPO) -> None:
    admin_execute(
        f'DROP DATABASE IF EXISTS "{SCRATCH}"', f'CREATE DATABASE "{SCRATCH}" TEMPLATE "{template}"'
    )
    env = {**os.environ, **django_env()}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=code,
        env=env,
        check=True,
        capture_output=True,
    )
    import psycopg

    with psycopg.connect(f"{SERVER}/{SCRATCH}", autocommit=True) as connection:
        # bench/load.py leaves its last case's study open: measure the one asked for.
        connection.execute(
            "UPDATE annotation_study SET status ="
            " CASE WHEN slug = %s THEN 'open' ELSE 'paused' END WHERE slug LIKE 'load-%%'",
            [f"load-{case}"],
        )
        connection.execute(
            "UPDATE annotation_assignment a SET state = 'expired' FROM annotation_item i"
            " WHERE a.item_id = i.id AND a.state = 'active'"
            " AND i.study_id IN (SELECT id FROM annotation_study WHERE status = 'paused')"
        )
        connection.execute("ANALYZE")


def one_run(args, code: Path = REPO) -> dict:
    """A child process per run: Django is set up once per process, against the copy, with
    the code of the checkout `code`."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", *sys.argv[1:]],
        cwd=code,
        env={**os.environ, **django_env(), "LOOP_CPU_CODE": str(code)},
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(f"the measured run failed:\n{out.stderr[-3000:]}")
    found = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(found["code"]) != code:
        raise SystemExit(f"the run measured the code of {found['code']}, not of {code}")
    return found


def django_env(database: str = SCRATCH) -> dict:
    """Production settings against `database` on the bench's server (the scratch copy by
    default)."""
    return {
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.production",
        "DJANGO_SECRET_KEY": "bench-loop-cpu-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,testserver",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": f"{SERVER}/{database}".replace("postgresql://", "postgres://"),
        "REDIS_URL": REDIS_URL,
        "DJANGO_LOG_LEVEL": "WARNING",
    }


def child(args) -> None:
    # The measured checkout's code before this one's (the same with no --against).
    sys.path.insert(0, os.environ.get("LOOP_CPU_CODE", str(REPO)))
    import django

    django.setup()
    import redis
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    import annotation
    from annotation.metric_definitions import PAIR_METRIC_SLUGS

    redis.Redis.from_url(REDIS_URL).flushdb()
    form = urlencode(
        {**{f"{p}-{slug}": "4" for p in "ab" for slug in PAIR_METRIC_SLUGS}, "preference": "tie"}
    )
    users = get_user_model().objects.filter(email__startswith=f"load-{args.case}-").order_by("pk")
    annotators = []
    for user in users[: args.annotators]:
        client = Client(headers={"X-Forwarded-Proto": "https"})
        client.force_login(user)
        page = client.get("/annotate/", secure=True, follow=True).content
        found = TOKEN.search(page)
        if found:
            annotators.append([client, found.group(1).decode()])
    if len(annotators) < args.annotators:
        raise SystemExit(f"only {len(annotators)} annotators with an item to rate")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()

    def backend_cpu() -> float:
        return load_stack.cpu_ms([backend]) / 1000

    profiler = None
    if args.profile:
        import cProfile

        # CPU time, not wall time: waiting for PostgreSQL is its CPU, measured apart. A
        # profiled run measures the profile, not the loop: its CPU figures are inflated.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
    database_before, own_before = backend_cpu(), time.process_time()
    judgments = 0
    for _ in range(args.judgments):
        for annotator in annotators:
            client, token = annotator
            response = client.post(
                f"/annotate/{token}/",
                data=form,
                content_type="application/x-www-form-urlencoded",
                headers={"HX-Request": "true"},
                secure=True,
            )
            assert response.status_code == 200, response.status_code
            judgments += 1
            found = TOKEN.search(response.content)
            if found is None:
                raise SystemExit("an annotator ran out of items; keep a larger database")
            annotator[1] = found.group(1).decode()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)
    print(
        json.dumps(
            {
                "judgments": judgments,
                # Where the measured code came from, checked by the parent.
                "code": str(Path(annotation.__file__).resolve().parent.parent),
                "postgres_ms": (backend_cpu() - database_before) / judgments * 1000,
                "web_ms": (time.process_time() - own_before) / judgments * 1000,
            }
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="chatanime_bench_load", help="kept by load.py")
    parser.add_argument("--case", choices=("tight", "generous"), default="tight")
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--judgments", type=int, default=50, help="per annotator and run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--profile", metavar="FILE", help="write a cProfile of the web process's loop to FILE"
    )
    parser.add_argument(
        "--against", metavar="DIR", help="another checkout to alternate runs with (compare)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    checkouts = {"this checkout": REPO}
    if args.against:
        checkouts["--against"] = Path(args.against).resolve()
    for code in checkouts.values():
        # The production settings serve static files from collectstatic's manifest.
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput"],
            cwd=code,
            env={**os.environ, **django_env()},
            check=True,
            capture_output=True,
        )
    runs: dict[str, list[dict]] = {name: [] for name in checkouts}
    for _ in range(args.repeat):
        for name, code in checkouts.items():
            fresh_copy(args.database, args.case, code)
            runs[name].append(one_run(args, code))
            print(
                f"run ({name}): {runs[name][-1]['judgments']} judgments, web process "
                f"{runs[name][-1]['web_ms']:.2f} ms, PostgreSQL "
                f"{runs[name][-1]['postgres_ms']:.2f} ms",
                flush=True,
            )
    admin_execute(f'DROP DATABASE IF EXISTS "{SCRATCH}"')
    together = {}
    for name, found in runs.items():
        web = statistics.median(r["web_ms"] for r in found)
        database = statistics.median(r["postgres_ms"] for r in found)
        together[name] = web + database
        print(
            f"CPU per judgment ({name}, {args.case} case), median of {len(found)} runs of "
            f"{args.annotators} annotators × {args.judgments}: web process {web:.2f} ms, "
            f"PostgreSQL {database:.2f} ms, together {web + database:.2f} ms"
        )
    if args.against:
        ratio = together["this checkout"] / together["--against"]
        print(f"this checkout against --against, CPU per judgment together: {ratio:.1%}")


if __name__ == "__main__":
    main()
