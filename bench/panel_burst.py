"""The burst when a study goes live on a panel: participants from Prolific's link, all
within a minute, on a production-shaped stack on this machine.

gunicorn (gunicorn.conf.py, production settings, behind a pretend TLS proxy), PostgreSQL
with autovacuum on as deployed (a server of the bench's own: this machine's shared one
runs without it, and its settings are not the bench's to change), Redis and one Celery
worker; the published dataset imported, its full study open and given to a Prolific
panel without the quiz (`study_panel SLUG --provider prolific ... --items 5 --no-quiz
--open`). wrk (bench/panel_burst.lua: one wrk process, thread and connection per
participant, started at their arrival) brings 300 participants whose arrivals are drawn
uniformly over 60 s; each walks the link, consent, characters, the first item, 5
judgments and the completion page, as a browser without JavaScript does (forms posted,
redirects followed, each page's static files fetched once), without pauses unless
--think gives them (the rush: every participant as fast as the server answers). For
each step: latency p50/p95/p99, requests, errors; judgments answered 302 against those
saved; codes shown against participants completed, each checked in the database; the
CPU each participant cost; and, on the same server, GET /health/ requests/s for scale.

    make bench-panel-burst     # or: .venv/bin/python bench/panel_burst.py [--repeat 3]

Needs wrk (Debian package `wrk`; the make target installs it) and PostgreSQL's initdb
and pg_ctl (or `--postgres server`: the server at BENCH_POSTGRES_URL, as it is configured).
Uses its own Redis database (BENCH_REDIS_URL). Other programs on the machine make the
figures noisy: each run prints the load average it started at.
"""

import argparse
import contextlib
import glob
import json
import math
import os
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import load_stack, report  # noqa: E402
from bench.load import DEFAULT_DATA, GUNICORN, VENV_BIN, WORKER_CPU_NICE  # noqa: E402
from bench.load_stack import (  # noqa: E402
    admin_execute,
    cpu_ms,
    free_port,
    gunicorn_workers,
    health_rate,
    integrity,
    machine_busy_ms,
    pids_named,
    process_tree,
    serve,
    settled_judgments,
    wait_until_up,
)

DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_bench_panel_burst")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
COMPLETION_CODE = "BURSTDONE"
SCREEN_OUT_CODE = "BURSTOUT"
# Prolific's study id, as its link fills it in (24 hexadecimal digits).
PROLIFIC_STUDY_ID = "6650c0ffee0ddba11b0a7d5e"
STEPS = [
    "entry",
    "static files",
    "consent",
    "characters",
    "first item",
    "judgment",
    "next item",
    "completion",
]


def pg_program(name: str) -> str:
    """One of PostgreSQL's server programs: on PATH, else Debian's newest."""
    found = shutil.which(name) or max(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda path: int(path.split("/")[4]),
        default=None,
    )
    if found is None:
        raise SystemExit(f"{name} not found: install PostgreSQL's server, or --postgres server")
    return found


@contextlib.contextmanager
def own_postgres():
    """A PostgreSQL server of the bench's own, on its defaults as the deployed image runs
    it (postgres:15 in docker-compose.yml, autovacuum on), removed at the end; yields its
    URL and its postmaster's process id."""
    directory = Path(tempfile.mkdtemp(prefix="chatanime-burst-pg-"))
    # PostgreSQL refuses to run as root.
    user = "postgres" if os.geteuid() == 0 else None
    if user:
        shutil.chown(directory, user)
    data, port = directory / "data", free_port()

    def run(*command, check=True):
        subprocess.run(command, cwd=directory, user=user, capture_output=True, check=check)

    run(pg_program("initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync")
    options = (
        f"-c port={port} -c listen_addresses=127.0.0.1"
        f" -c unix_socket_directories={directory} -c autovacuum=on"
    )
    pg_ctl = pg_program("pg_ctl")
    run(pg_ctl, "-D", str(data), "-l", str(directory / "server.log"), "-o", options, "-w", "start")
    try:
        postmaster = int((data / "postmaster.pid").read_text().split()[0])
        yield f"postgres://postgres@127.0.0.1:{port}/postgres", postmaster
    finally:
        run(pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop", check=False)
        shutil.rmtree(directory, ignore_errors=True)


def database_url() -> str:
    return f"{load_stack.SERVER.rsplit('/', 1)[0]}/{DATABASE}"


def query(sql: str, *parameters):
    import psycopg

    with psycopg.connect(database_url().replace("postgres://", "postgresql://")) as c:
        return c.execute(sql, parameters).fetchall()


def prepare(args) -> dict:
    """Import the data, open the full study and give it to a Prolific panel."""
    import io

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation import services
    from dialogues.importer import import_chatanime
    from dialogues.models import Character, Source, SourceKind

    import_chatanime(args.data)
    study = services.study_create(
        name="Panel burst",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
    )
    items = services.study_open(study=study)
    out = io.StringIO()
    call_command(
        "study_panel",
        study.slug,
        provider="prolific",
        completion_code=COMPLETION_CODE,
        screen_out_code=SCREEN_OUT_CODE,
        items=str(args.items),
        quiz=False,
        is_open=True,
        stdout=out,
    )
    characters = Character.objects.count()
    queries = queries_per_request(study.slug, args.items)
    connection.close()
    return {
        "slug": study.slug,
        "items": items,
        "characters": characters,
        "panel": out.getvalue(),
        "queries": queries,
    }


def queries_per_request(slug: str, items: int) -> dict[str, int]:
    """The queries of each request on one participant's way, counted in-process (with
    the production settings, as the server runs them); a request made several times
    shows its last."""
    import re

    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.helpers import complete_form

    client = Client(headers={"X-Forwarded-Proto": "https"})
    counted = {}

    def count(name, method, url, **kwargs):
        with CaptureQueriesContext(connection) as queries:
            response = getattr(client, method)(url, secure=True, **kwargs)
        assert response.status_code in (200, 302), (name, response.status_code)
        counted[name] = len(queries)
        return response

    start = f"/join/{slug}/start/"
    count(
        "link (302)",
        "get",
        f"/join/{slug}/?PROLIFIC_PID=inprocess&STUDY_ID={PROLIFIC_STUDY_ID}&SESSION_ID=s1",
    )
    count("consent page", "get", start)
    count("consent post (302)", "post", start, data={"step": "consent", "agree": "yes"})
    page = count("characters page", "get", start)
    chosen = re.findall(r'name="characters" value="(\d+)"', page.content.decode())[:2]
    count("characters post (302)", "post", start, data={"step": "characters", "characters": chosen})
    count("instructions page", "get", start)
    item = count("GET /annotate/ (302)", "get", "/annotate/")["Location"]
    for _ in range(items):
        count("rating page", "get", item)
        count("judgment post (302)", "post", item, data=complete_form())
        item = count("GET /annotate/ (302)", "get", "/annotate/")["Location"]
    count("completion page", "get", item)
    return counted


def percentile(values: list[float], p: float) -> float:
    """Nearest rank, as bench/annotate.lua reports its cycles."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def read_log(path: Path) -> dict:
    steps, errors, excerpts = defaultdict(list), defaultdict(int), []
    codes, totals, gave_up = defaultdict(list), [], []
    # An error's excerpt may end inside a character.
    for line in path.read_text(errors="replace").splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "STEP":
            participant, rest = rest.split(" ", 1)
            name, ms, _requests = rest.rsplit(" ", 2)
            steps[name].append(float(ms))
        elif kind == "ERROR":
            participant, rest = rest.split(" ", 1)
            name = next(s for s in STEPS if rest.startswith(s + " "))
            errors[name] += 1
            if len(excerpts) < 5:
                excerpts.append(f"participant {participant}, {rest}")
        elif kind == "DONE":
            participant, code, ms = rest.split(" ")
            codes[int(participant)].append(code)
            totals.append(float(ms))
        elif kind == "GAVEUP":
            gave_up.append(rest)
    return {
        "steps": steps,
        "errors": errors,
        "excerpts": excerpts,
        "codes": codes,
        "totals": totals,
        "gave_up": gave_up,
    }


class Watched:
    """The participants' log, read as it grows: who has finished, with their code or
    giving up."""

    def __init__(self, path: Path):
        self.path, self.offset, self.ended = path, 0, set()

    def read(self) -> set[int]:
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            data = log.read()
        # A line still being written waits for the next read.
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            if line.startswith(("DONE ", "GAVEUP ")):
                self.ended.add(int(line.split(" ")[1]))
        return self.ended


def stop_ended(watched: Watched, running: dict[int, subprocess.Popen]) -> None:
    """End the wrk of each participant who has finished (wrk would otherwise wait out its
    duration; on SIGINT it reports at once), and forget those that have exited."""
    ended = watched.read()
    for participant, wrk in list(running.items()):
        if wrk.poll() is not None:
            del running[participant]
        elif participant in ended:
            wrk.send_signal(signal.SIGINT)


def cpu_reading(processes: dict) -> dict[str, float]:
    """CPU milliseconds so far of the web workers, the Celery worker, PostgreSQL (the
    bench's own server and its ended backends; else every process named postgres) and
    the whole machine."""
    postgres = (
        process_tree(processes["postmaster"]) if processes["postmaster"] else pids_named("postgres")
    )
    return {
        "web": cpu_ms(processes["web"]),
        "worker": cpu_ms(processes["worker"]),
        "postgres": cpu_ms(postgres, with_ended_children=True),
        "machine": machine_busy_ms(),
    }


def run_burst(
    args,
    number: int,
    host: str,
    slug: str,
    out_dir: Path,
    processes: dict,
    *,
    participants: int,
    spread: float,
    think: float,
) -> dict:
    """One burst: `participants` new participants (panel ids of their own) arriving over
    `spread` seconds and pausing `think` seconds on average, wrk stopped once every one
    has their code or has given up."""
    tag = f"burst{number}x{secrets.token_hex(3)}"
    log = out_dir / f"{tag}.log"
    log.touch()
    load_average = os.getloadavg()[0]
    saved_before = settled_judgments()
    # Arrivals drawn uniformly over the spread, each participant's wrk started then: wrk
    # opens its connection when it starts (bench/panel_burst.lua says why that matters).
    draw = random.Random(number)
    arrivals = sorted(draw.uniform(0, spread) for _ in range(participants))
    # Long enough for the last arrival to finish with every pause at its longest.
    seconds = int(240 + 12 * think)
    env = {
        **os.environ,
        "BURST_HOST": host,
        "BURST_SLUG": slug,
        "BURST_RUN": tag,
        "BURST_STUDY_ID": PROLIFIC_STUDY_ID,
        "BURST_THINK_MS": str(int(think * 1000)),
        "BURST_SEED": str(number + 1),
        "BURST_LOG": str(log),
    }
    command = ["wrk", "-t", "1", "-c", "1", "-d", f"{seconds}s", "--timeout", "120s"]
    command += ["-s", str(REPO / "bench" / "panel_burst.lua"), f"http://{host}"]
    cpu_before = cpu_reading(processes)
    started = time.monotonic()
    running: dict[int, subprocess.Popen] = {}
    outputs: list[Path] = []
    watched = Watched(log)
    with contextlib.ExitStack() as files:
        for participant, at in enumerate(arrivals, 1):
            while time.monotonic() < started + at:
                stop_ended(watched, running)
                time.sleep(min(0.05, max(0.0, started + at - time.monotonic())))
            outputs.append(out_dir / f"{tag}-{participant}.out")
            running[participant] = subprocess.Popen(
                command,
                env={**env, "BURST_ID": str(participant)},
                stdout=files.enter_context(open(outputs[-1], "w")),
                stderr=subprocess.STDOUT,
            )
        while running:
            stop_ended(watched, running)
            time.sleep(0.2)
    elapsed = time.monotonic() - started
    result = {"requests": 0, "connect": 0, "read": 0, "write": 0, "sent": defaultdict(int)}
    for output in outputs:
        text = output.read_text()
        found = [json.loads(line[7:]) for line in text.splitlines() if line.startswith("RESULT ")]
        if not found:
            raise SystemExit(f"wrk failed ({output}): {text}")
        for key in ("requests", "connect", "read", "write"):
            result[key] += found[0][key]
        for name, n in found[0]["sent"].items():
            result["sent"][name] += n
    # Answers still in flight when wrk stopped are the server's to finish.
    saved_total = settled_judgments() - saved_before
    cpu_after = cpu_reading(processes)
    seen = read_log(log)
    rows = query(
        "SELECT p.state, p.code, count(j.id) FROM panels_participant p"
        " LEFT JOIN annotation_judgment j ON j.annotator_id = p.user_id"
        " WHERE p.pid LIKE %s GROUP BY p.id",
        tag + "%",
    )
    completed = [row for row in rows if row[0] == "completed"]
    shown = seen["codes"]
    steps = {}
    for name in STEPS:
        latencies = seen["steps"].get(name, [])
        steps[name] = {
            "done": len(latencies),
            "requests": result["sent"].get(name, 0),
            "errors": seen["errors"].get(name, 0),
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "p99": percentile(latencies, 99),
        }
    return {
        "load": load_average,
        "seconds": elapsed,
        "steps": steps,
        "requests": result["requests"],
        "socket_errors": result["connect"] + result["read"] + result["write"],
        "excerpts": seen["excerpts"],
        "joined": len(rows),
        "answered": len(seen["steps"].get("judgment", [])),
        # Judgments of this burst's participants, and everything the server saved while
        # it ran (the same, unless something else wrote).
        "saved": sum(row[2] for row in rows),
        "saved_total": saved_total,
        "completed_db": len(completed),
        "completed_seen": len(shown),
        "codes_issued": sum(1 for row in rows if row[1]),
        # Every completed participant exactly one code, the panel's, shown once; nobody
        # else any.
        "code_problems": sum(1 for row in completed if row[1] != COMPLETION_CODE)
        + sum(1 for row in rows if row[1] and row[0] != "completed")
        + sum(1 for codes in shown.values() if codes != [COMPLETION_CODE])
        + abs(len(shown) - len(completed)),
        "wrong_count": sum(1 for row in completed if row[2] != args.items)
        + sum(1 for row in rows if row[2] > args.items),
        "gave_up": len(seen["gave_up"]),
        "unfinished": participants - len(shown) - len(seen["gave_up"]),
        "cpu_ms_per_participant": {
            part: (cpu_after[part] - cpu_before[part]) / participants for part in cpu_after
        },
        "total_p50": percentile(seen["totals"], 50),
        "total_p95": percentile(seen["totals"], 95),
    }


def goal_met(run: dict) -> bool:
    errors = sum(s["errors"] for s in run["steps"].values()) + run["socket_errors"]
    return (
        errors == 0
        and run["answered"] == run["saved"]
        and run["code_problems"] == 0
        and run["wrong_count"] == 0
        and run["unfinished"] == 0
        and run["steps"]["entry"]["p95"] < 1000
        and run["steps"]["first item"]["p95"] < 1000
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=300)
    parser.add_argument("--spread", type=float, default=60, help="seconds the arrivals span")
    parser.add_argument("--items", type=int, default=5, help="items per participant")
    parser.add_argument(
        "--think",
        type=float,
        default=0,
        help="mean seconds a participant pauses before each form and the first item (0: none)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="bursts; the table shows medians")
    parser.add_argument(
        "--warmup", type=int, default=12, help="participants of an uncounted burst first"
    )
    parser.add_argument(
        "--workers", type=int, default=GUNICORN["workers"], help="gunicorn worker processes"
    )
    parser.add_argument(
        "--threads", type=int, default=GUNICORN["threads"], help="threads per gunicorn worker"
    )
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=WORKER_CPU_NICE,
        help="nice value of the Celery worker's scheduling group (0: the web server's weight)",
    )
    parser.add_argument(
        "--postgres",
        choices=["own", "server"],
        default="own",
        help="own: a server of the bench's own with autovacuum on; server: BENCH_POSTGRES_URL",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        postmaster = None
        if args.postgres == "own":
            load_stack.SERVER, postmaster = stack.enter_context(own_postgres())
        load_stack.DATABASE = DATABASE
        burst(args, stack, postmaster)


def burst(args, stack: contextlib.ExitStack, postmaster: int | None) -> None:
    port = free_port()
    host = f"127.0.0.1:{port}"
    admin_execute(f'DROP DATABASE IF EXISTS "{DATABASE}"', f'CREATE DATABASE "{DATABASE}"')
    env = {
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.production",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,testserver",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": database_url(),
        "REDIS_URL": REDIS_URL,
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=REPO, check=True, capture_output=True
        )
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()
    started = time.perf_counter()
    prepared = prepare(args)
    autovacuum = query("SHOW autovacuum")[0][0]
    print(
        f"prepared in {time.perf_counter() - started:.0f} s: {prepared['items']} items,"
        f" {prepared['characters']} characters; PostgreSQL autovacuum {autovacuum}"
    )
    print(prepared["panel"].rstrip())

    out_dir = Path(tempfile.mkdtemp(prefix="chatanime-burst-"))
    # Entered before the server starts: the worker stops after it.
    worker, gunicorn = serve(
        stack,
        env=env,
        host=host,
        args=args,
        redis_url=REDIS_URL,
        out_dir=out_dir,
        venv_bin=VENV_BIN,
    )
    runs = []
    try:
        wait_until_up(f"http://{host}/health/")
        health_before, _cpu = health_rate(host)
        processes = {
            "web": gunicorn_workers(gunicorn.pid),
            "worker": process_tree(worker.pid),
            "postmaster": postmaster,
        }
        if args.warmup:
            # Each worker process's first requests of a kind load code and templates: a
            # server that has been up before the study goes live has done that.
            warm = run_burst(
                args,
                0,
                host,
                prepared["slug"],
                out_dir,
                processes,
                participants=args.warmup,
                spread=1,
                think=0,
            )
            print(
                f"warm-up: {args.warmup} participants, {warm['seconds']:.0f} s,"
                f" {warm['completed_db']} completed (not counted)",
                flush=True,
            )
        for number in range(1, args.repeat + 1):
            run = run_burst(
                args,
                number,
                host,
                prepared["slug"],
                out_dir,
                processes,
                participants=args.participants,
                spread=args.spread,
                think=args.think,
            )
            runs.append(run)
            print(
                f"burst {number}: load average {run['load']:.1f} at its start,"
                f" {run['seconds']:.0f} s, {run['requests']} requests, entry p95"
                f" {run['steps']['entry']['p95']:.0f} ms, first item p95"
                f" {run['steps']['first item']['p95']:.0f} ms, {run['answered']} judgments"
                f" answered 302 / {run['saved']} saved, {run['completed_db']} completed",
                flush=True,
            )
        health_after, _cpu = health_rate(host)
    finally:
        os.killpg(gunicorn.pid, signal.SIGTERM)
        gunicorn.wait(timeout=30)
    health = (health_before + health_after) / 2
    print_table(args, prepared, runs, health, health_before, health_after, autovacuum)
    checks = integrity()
    print(
        f"whole database: duplicates {checks['duplicates']}, over-assigned items"
        f" {checks['over_assigned']}, items whose count differs from their judgments"
        f" {checks['count_drift']}, characters whose progress differs"
        f" {checks['progress_drift']}, judgments filed under another study {checks['misfiled']}"
    )
    print(f"\nlogs: {out_dir}")
    admin_execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')


def print_table(args, prepared, runs, health, health_before, health_after, autovacuum) -> None:
    def median(values):
        values = [v for v in values if not math.isnan(v)]
        return statistics.median(values) if values else float("nan")

    print(
        f"\n{args.participants} participants arriving over {args.spread:g} s"
        + (f", pausing {args.think:g} s on average" if args.think else ", no pauses")
        + f"; {args.items} items each; gunicorn {args.workers} workers × {args.threads}"
        f" threads, 1 Celery worker, PostgreSQL (autovacuum {autovacuum}), Redis, wrk; the"
        f" published dataset, full study ({prepared['items']} items, {prepared['characters']}"
        f" characters); {len(runs)} burst(s): medians of their percentiles, counts summed"
    )
    print(
        f"GET /health/ on the same server: {health:.0f} requests/s (before"
        f" {health_before:.0f}, after {health_after:.0f}); load average at each burst's start:"
        f" {', '.join(f'{r["load"]:.1f}' for r in runs)}"
    )
    print(
        f"{'step':<14}{'done':>7}{'requests':>9}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}{'errors':>7}"
    )
    for name in STEPS:
        figures = [run["steps"][name] for run in runs]
        print(
            f"{name:<14}{sum(f['done'] for f in figures):>7}"
            f"{sum(f['requests'] for f in figures):>9}"
            f"{median([f['p50'] for f in figures]):>8.0f}"
            f"{median([f['p95'] for f in figures]):>8.0f}"
            f"{median([f['p99'] for f in figures]):>8.0f}"
            f"{sum(f['errors'] for f in figures):>7}"
        )
    total = sum(run["socket_errors"] for run in runs)
    answered, saved = sum(r["answered"] for r in runs), sum(r["saved"] for r in runs)
    print(
        f"arrival to code: p50 {median([r['total_p50'] for r in runs]) / 1000:.1f} s,"
        f" p95 {median([r['total_p95'] for r in runs]) / 1000:.1f} s; socket errors {total}"
    )
    print(
        f"judgments: {answered} answered 302, {saved} saved ({answered - saved} lost);"
        f" saved while the bursts ran: {sum(r['saved_total'] for r in runs)}"
    )
    print(
        f"participants: {sum(r['joined'] for r in runs)} joined,"
        f" {sum(r['completed_db'] for r in runs)} completed in the database,"
        f" {sum(r['completed_seen'] for r in runs)} shown their code,"
        f" {sum(r['codes_issued'] for r in runs)} codes issued;"
        f" code mismatches {sum(r['code_problems'] for r in runs)}, completed without exactly"
        f" {args.items} judgments {sum(r['wrong_count'] for r in runs)}, gave up"
        f" {sum(r['gave_up'] for r in runs)}, unfinished {sum(r['unfinished'] for r in runs)}"
    )
    cpu = {
        part: median([r["cpu_ms_per_participant"][part] for r in runs])
        for part in ("web", "worker", "postgres", "machine")
    }
    print(
        f"CPU ms per participant: web {cpu['web']:.0f}, Celery worker {cpu['worker']:.0f},"
        f" PostgreSQL {cpu['postgres']:.0f}, whole machine {cpu['machine']:.0f} (wrk and"
        " other programs included)"
    )
    print(
        "queries per request (in-process): "
        + ", ".join(f"{name} {n}" for name, n in prepared["queries"].items())
    )
    met = sum(goal_met(run) for run in runs)
    print(
        "goal (0 errors, 0 lost, exactly one code per completed participant, entry and first"
        f" item p95 under 1 s): met in {met} of {len(runs)} bursts"
    )
    for run in runs:
        for excerpt in run["excerpts"]:
            print(f"  error: {excerpt}")
    entry = median([r["steps"]["entry"]["p95"] for r in runs])
    first = median([r["steps"]["first item"]["p95"] for r in runs])
    report(
        f"panel burst: {args.participants} participants over {args.spread:g} s",
        "gunicorn + PostgreSQL + Redis + worker, wrk",
        f"entry p95 {entry:.0f} ms, first item p95 {first:.0f} ms,"
        f" {sum(sum(s['errors'] for s in r['steps'].values()) for r in runs)} errors,"
        f" {answered - saved} lost, goal met in {met} of {len(runs)}",
    )


if __name__ == "__main__":
    main()
