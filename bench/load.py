"""Load test of the annotator loop on a production-shaped stack on this machine.

gunicorn (production settings, behind a pretend TLS proxy), PostgreSQL, Redis and a Celery
worker recomputing results as judgments arrive; the published dataset imported and the full
study open (24,000 pairs). wrk (bench/annotate.lua: one thread and one connection per
annotator) runs 10, 50 and 200 annotators in a closed loop (submit, receive the next item,
submit again: the platform's capacity), then 200 annotators who pause about 30 s between
items. Before each case's levels, annotators rate unmeasured (the first case's until
autovacuum has analyzed the tables every judgment writes): a deployed server plans for
tables with rows in them, where a fresh database's plans, and the foreign-key checks'
plans each connection keeps, are sequential scans of empty tables that then grow by a
hundred rows a second. For each level: judgments/s, p50/p95/p99 of submit + next,
errors, judgments saved against successful answers, and the CPU milliseconds per
judgment of the web workers, the results worker, PostgreSQL, Redis and the whole
machine; and, on the same server, GET /health/ requests/s, so the loop reads as a share
of a bare request.
Before that, the queries each annotator page makes are counted in-process.

    make bench-load            # or: .venv/bin/python bench/load.py [--users 10,50,200]

Needs wrk (Debian package `wrk`; `make bench-load` installs it). Uses its own scratch
database (BENCH_DATABASE) and Redis database (BENCH_REDIS_URL), dropped at the end unless
--keep. Other programs on the machine make the figures noisy: compare ratios within a run.
"""

import argparse
import contextlib
import json
import os
import runpy
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402
from bench.load_accounts import open_only, prepare  # noqa: E402
from bench.load_stack import (  # noqa: E402
    DATABASE,
    LOOP_TABLES,
    SERVER,
    admin_execute,
    free_port,
    health_rate,
    integrity,
    loop_tables_analyzed_since,
    median_run,
    run_level,
    serve,
    statistics_refresh,
    wait_until_up,
)

VENV_BIN = Path(sys.executable).parent
# The site's gunicorn settings, which the server started here reads too.
GUNICORN = runpy.run_path(str(REPO / "gunicorn.conf.py"))
DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
# The Celery worker's CPU weight against the web server's, as in docker-compose.yml
# (`cpu_shares: 256` against Docker's default 1024): on Linux, the nice value of its
# scheduling group (autogroup) whose weight is closest, 272 against 1024.
WORKER_CPU_NICE = 6
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
# Before a case's levels, annotators rate unmeasured in rounds of this many seconds; the
# first case's, until autovacuum has analyzed the tables every judgment writes (at most
# WARM_UP_MOST_SECONDS): a deployed server has been running, and its plans are those of
# tables with rows in them, not of the empty ones a fresh database starts with.
WARM_UP_ROUND_SECONDS = 15
WARM_UP_MOST_SECONDS = 240


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="10,50,200", help="concurrency levels")
    parser.add_argument("--seconds", type=int, default=45, help="measured seconds per level")
    parser.add_argument(
        "--workers", type=int, default=GUNICORN["workers"], help="gunicorn worker processes"
    )
    parser.add_argument(
        "--threads", type=int, default=GUNICORN["threads"], help="threads per gunicorn worker"
    )
    parser.add_argument(
        "--crowd",
        default="200:30",
        help="extra levels with think time, users:seconds between submissions ('' for none)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per level; the table shows their median"
    )
    parser.add_argument(
        "--profile", type=int, default=0, help="profile this many submit + next cycles in-process"
    )
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=WORKER_CPU_NICE,
        help="nice value of the Celery worker's scheduling group (0: the web server's weight)",
    )
    parser.add_argument(
        "--staffing",
        default="tight,generous",
        help="the cases, each with a study and annotators of its own (tight, generous)",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    args.users = [int(n) for n in args.users.split(",") if n]
    args.crowd = [
        (int(users), float(think))
        for users, think in (level.split(":") for level in args.crowd.split(",") if level)
    ]
    args.staffing = [case for case in args.staffing.split(",") if case]
    if not args.staffing or set(args.staffing) - {"tight", "generous"}:
        parser.error("--staffing: tight, generous or both")

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
    users = args.repeat * sum([*args.users, *(u for u, _ in args.crowd)])
    prepared = prepare(args, host, args.staffing, users)
    print(f"prepared in {time.perf_counter() - started:.0f} s")
    for case, c in prepared["cases"].items():
        print(f"{case}: {staffing_line(c)}")
    # What autovacuum does soon after a large import, before the first annotator arrives.
    statistics_refresh()

    out_dir = Path(tempfile.mkdtemp(prefix="chatanime-load-"))
    # The Celery worker recomputing results, on the production settings like the server;
    # stopped after the server, in the `finally` below.
    worker = contextlib.ExitStack()
    results_worker, gunicorn = serve(
        worker,
        env=env,
        host=host,
        args=args,
        redis_url=REDIS_URL,
        out_dir=out_dir,
        venv_bin=VENV_BIN,
    )
    levels = [(users, 0.0, args.seconds) for users in args.users] + [
        # A crowd is watched for longer, so that it settles into its rhythm.
        (users, think, 2 * args.seconds)
        for users, think in args.crowd
    ]
    studies = [c["study"] for c in prepared["cases"].values()]
    results: dict[str, list[dict]] = {}
    warmed: dict[str, float] = {}
    try:
        wait_until_up(f"http://{host}/health/")
        since, health_before = time.time(), None
        for case, c in prepared["cases"].items():
            open_only(c["study"], [pk for pk in studies if pk != c["study"]])
            accounts, warmed[case], analyzed = warm_up(
                args, c["accounts"], prepared, out_dir, gunicorn, results_worker, host, since
            )
            if not analyzed:
                print(f"{case}: autovacuum had not analyzed {', '.join(LOOP_TABLES)} yet")
            if health_before is None:
                # After the warm-up: before it, autovacuum is still busy with the import.
                health_before, health_cpu_before = health_rate(host)
            results[case] = run_levels(
                args, levels, accounts, prepared, out_dir, gunicorn, results_worker, host
            )
        health_after, health_cpu_after = health_rate(host)
    finally:
        os.killpg(gunicorn.pid, signal.SIGTERM)
        gunicorn.wait(timeout=30)
        worker.close()
    health = (health_before + health_after) / 2
    checks = integrity()

    print(
        f"\ngunicorn {args.workers} workers × {args.threads} threads, 1 Celery worker, "
        f"PostgreSQL (autovacuum on), Redis, wrk; {args.seconds} s per level, median of "
        f"{args.repeat} run(s); latency of completed 'submit + next item' cycles, think time "
        "excluded; errors, 200s and saved summed over the runs; before each case's levels, "
        "annotators rated unmeasured for "
        + ", ".join(f"{seconds:.0f} s ({case})" for case, seconds in warmed.items())
        + ", the first until autovacuum had analyzed the tables every judgment writes"
    )
    print(
        f"GET /health/: {health:.0f} req/s (before {health_before:.0f}, after {health_after:.0f}),"
        f" machine CPU {(health_cpu_before + health_cpu_after) / 2:.1f} ms per request"
    )
    for case, rows in results.items():
        print(f"\n{case}: {staffing_line(prepared['cases'][case])}")
        print_table(case, rows, health)
    if len(results) == 2:
        tight, generous = results.get("tight", []), results.get("generous", [])
        print(
            "\ntight against generous, judgments/s: "
            + ", ".join(
                f"{t['users']}{' think' if t['think'] else ''}: "
                f"{100 * t['judgments_per_s'] / g['judgments_per_s']:.0f} %"
                for t, g in zip(tight, generous, strict=True)
                if g["judgments_per_s"]
            )
        )
    print(
        f"duplicates: {checks['duplicates']}, over-assigned items: {checks['over_assigned']}, "
        f"items whose count differs from their judgments: {checks['count_drift']}, "
        f"characters whose progress differs from their items: {checks['progress_drift']}, "
        f"judgments filed under another study than their item's: {checks['misfiled']}"
    )
    idle = [
        f"{case} {r['users']}: {r['no_work']}"
        for case, rows in results.items()
        for r in rows
        if r.get("no_work")
    ]
    if idle:
        print(
            "answers 'nothing to rate now' (an annotator at their cap; not errors), per level: "
            + ", ".join(idle)
        )
    print("\nqueries per annotator page")
    for page, n in prepared["queries"].items():
        print(f"  {page:<24}{n:>4}")
    for case, rows in results.items():
        for r in rows:
            print(f"{case}, judgments/s of each run at {r['users']} annotators: {r['runs']}")
    if prepared["profile"]:
        print(f"\nin-process profile of {args.profile} submit + next cycles\n")
        print(prepared["profile"])
    print(f"\nlogs: {out_dir}")
    if not args.keep:
        admin_execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')


def staffing_line(case: dict) -> str:
    per, needed = case["raters_per_character"], case["needed"]
    return (
        f"{case['items']} items, {len(case['accounts'])} annotators for the levels; "
        f"{per} may rate each character ({per / needed:.2f} × the {needed} it needs); "
        f"{case['tightly_staffed']} of {case['characters']} characters tightly staffed"
        " (their items are ordered with the look-ahead)"
    )


def warm_up(args, accounts, prepared, out_dir, gunicorn, results_worker, host, since):
    """Annotators rate, unmeasured, in rounds of WARM_UP_ROUND_SECONDS until autovacuum
    has analyzed the loop's tables since `since` (at most WARM_UP_MOST_SECONDS). Returns
    the accounts left with work, the seconds spent and whether the tables were analyzed."""
    users = min(50, max(args.users))
    started = time.perf_counter()
    while True:
        _run, accounts = level_and_left(
            users,
            WARM_UP_ROUND_SECONDS,
            0.0,
            accounts,
            prepared,
            out_dir,
            gunicorn,
            results_worker,
            host,
        )
        spent = time.perf_counter() - started
        analyzed = loop_tables_analyzed_since(since)
        if analyzed or spent > WARM_UP_MOST_SECONDS:
            return accounts, spent, analyzed


def level_and_left(
    users, seconds, think, accounts, prepared, out_dir, gunicorn, results_worker, host
) -> tuple[dict, list]:
    """One wrk run of `users` annotators of `accounts`, and the accounts left with work:
    annotators who finished the work they may do never come back; the others go on with
    their current item in the next run."""
    run = run_level(
        users,
        seconds,
        host,
        accounts,
        prepared["metrics"],
        out_dir,
        gunicorn.pid,
        think,
        worker_pid=results_worker.pid,
        redis_url=REDIS_URL,
    )
    finished = set(run["finished"])
    return run, [a for n, a in enumerate(accounts) if n not in finished]


def run_levels(args, levels, accounts, prepared, out_dir, gunicorn, results_worker, host):
    """Every level of one case, each run with annotators of its own; the median runs."""
    results, left = [], list(accounts)
    for users, think, seconds in levels:
        runs = []
        for _ in range(args.repeat):
            run, left = level_and_left(
                users, seconds, think, left, prepared, out_dir, gunicorn, results_worker, host
            )
            if len(left) < max(users for users, _t, _s in levels):
                raise SystemExit(f"too few annotators left with work: {len(left)}")
            runs.append(run)
        for run in runs:
            print(json.dumps({k: v for k, v in run.items() if k != "finished"}), flush=True)
        results.append(median_run(runs))
    return results


def print_table(case: str, results: list[dict], health: float) -> None:
    header = (
        f"{'annotators':>10}{'accounts':>9}{'think s':>8}{'judg./s':>9}{'% health':>9}{'p50 ms':>8}"
        f"{'p95 ms':>8}{'p99 ms':>8}{'errors':>7}{'200s':>7}{'saved':>7}{'CPU ms/j':>9}"
        f"{'worker ms/j':>12}{'PG ms/j':>8}{'Redis ms/j':>11}{'Redis cmd/j':>12}"
        f"{'machine ms/j':>13}"
    )
    print(header)
    for r in results:
        share = 100 * r["judgments_per_s"] / health if health else 0
        report(
            f"load ({case} staffing): {r['users']} annotators"
            + (f", {r['think']:g} s between items" if r["think"] else ", no pause"),
            "gunicorn + PostgreSQL + Redis + worker, wrk",
            f"{r['judgments_per_s']:.1f} judgments/s ({share:.0f}% of /health/), "
            f"{r['median']:.0f}/{r['p95']:.0f}/{r['p99']:.0f} ms p50/p95/p99, "
            f"{r['errors']} errors, {r['ok']} ok / {r['saved']} saved, "
            f"{r['cpu_ms_per_judgment']:.0f} CPU ms per judgment",
        )
        print(
            f"{r['users']:>10}{r['annotators']:>9}{r['think']:>8g}{r['judgments_per_s']:>9.1f}"
            f"{share:>9.0f}"
            f"{r['median']:>8.0f}{r['p95']:>8.0f}{r['p99']:>8.0f}{r['errors']:>7}{r['ok']:>7}"
            f"{r['saved']:>7}{r['cpu_ms_per_judgment']:>9.0f}"
            f"{r['worker_cpu_ms_per_judgment']:>12.0f}{r['postgres_cpu_ms_per_judgment']:>8.1f}"
            f"{r['redis_cpu_ms_per_judgment']:>11.1f}{r['redis_commands_per_judgment']:>12.1f}"
            f"{r['machine_cpu_ms_per_judgment']:>13.1f}"
        )


if __name__ == "__main__":
    main()
