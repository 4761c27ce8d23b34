"""The running side of bench/load.py: the server's processes, wrk runs of the
annotator loop (bench/annotate.lua) and the checks of what they saved."""

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_bench_load")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def admin_execute(*statements):
    import psycopg

    with psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True) as c:
        for statement in statements:
            c.execute(statement)


def serve(stack, *, env, host, args, redis_url, out_dir, venv_bin):
    """Start the stack a bench measures, on the production settings in `env`: one Celery
    worker at `args.worker_nice` and gunicorn with `args.workers` × `args.threads` (the rest
    from REPO/gunicorn.conf.py), logging into `out_dir`. The worker and the log files are
    entered on `stack`, so the worker outlives the server the caller stops first; returns
    (worker, gunicorn)."""
    from tests.fixtures.services import running_worker

    autovacuum_before = stack.enter_context(autovacuum_on())
    print(f"PostgreSQL's autovacuum: on for this run (the server had it {autovacuum_before})")
    gunicorn_log = stack.enter_context(open(out_dir / "gunicorn.log", "w"))  # noqa: SIM115
    worker_log = stack.enter_context(open(out_dir / "worker.log", "w"))  # noqa: SIM115
    worker = stack.enter_context(
        running_worker(
            database_url=env["DATABASE_URL"],
            redis_url=redis_url,
            queues=["celery"],
            env={
                "DJANGO_SETTINGS_MODULE": env["DJANGO_SETTINGS_MODULE"],
                "DATABASE_CONN_MAX_AGE": os.environ.get("DATABASE_CONN_MAX_AGE", "60"),
            },
            loglevel="WARNING",
            pool="prefork",
            log=worker_log,
            cpu_nice=args.worker_nice,
        )
    )
    gunicorn = subprocess.Popen(
        [
            str(venv_bin / "gunicorn"),
            "chatanime_site.wsgi:application",
            "--bind",
            host,
            "--workers",
            str(args.workers),
            "--threads",
            str(args.threads),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=gunicorn_log,
        start_new_session=True,
    )
    return worker, gunicorn


def wait_until_up(url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} did not come up")


def scratch_database(autocommit: bool = False):
    """A connection to the bench's scratch database on the bench's server."""
    import psycopg

    url = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}".replace("postgres://", "postgresql://")
    return psycopg.connect(url, autocommit=autocommit)


def judgments_saved() -> int:
    with scratch_database() as c:
        return c.execute("SELECT count(*) FROM annotation_judgment").fetchone()[0]


def settled_judgments(quiet_seconds=2.0, timeout=60) -> int:
    """The number of saved judgments once it has stopped changing."""
    deadline = time.monotonic() + timeout
    count = judgments_saved()
    while time.monotonic() < deadline:
        time.sleep(quiet_seconds)
        now = judgments_saved()
        if now == count:
            break
        count = now
    return count


def cpu_ms(pids, *, with_ended_children: bool = False) -> float:
    """User + system CPU of these processes so far, in milliseconds; with
    `with_ended_children`, also that of their children that have ended (a server whose
    connections come and go: PostgreSQL's backends end into the postmaster's count)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
        if with_ended_children:
            total += int(fields[13]) + int(fields[14])
    return 1000 * total / ticks


def pids_named(*names: str) -> list[int]:
    """Every process whose command is one of `names` (PostgreSQL's backends and its own
    background processes, the Redis server), found again at each reading: backends come
    and go."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "comm").read_text().strip()
            except OSError:
                continue
            if command in names:
                found.append(int(entry.name))
    return found


def machine_busy_ms() -> float:
    """CPU time all cores spent on anything but idling and waiting, in milliseconds."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return 1000 * (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def redis_commands(redis_url: str | None) -> int:
    """Commands the Redis server has run since it started, the /health/ check's PING
    aside (INFO commandstats): over a level, the cache's, the sessions' and the broker's
    round trips."""
    if not redis_url:
        return 0
    import redis

    stats = redis.Redis.from_url(redis_url).info("commandstats")
    return sum(
        entry["calls"]
        for name, entry in stats.items()
        if name not in ("cmdstat_ping", "cmdstat_info")
    )


class CpuSplit:
    """Where the machine's CPU went over a stretch of time: the web workers, the results
    worker, PostgreSQL, Redis and the whole machine (the rest is wrk, the kernel's
    networking and the bench itself)."""

    def __init__(self, web: list[int], worker: list[int]):
        self.web, self.worker = web, worker
        self.before = self._reading()

    def _reading(self) -> dict[str, float]:
        return {
            "web": cpu_ms(self.web),
            "worker": cpu_ms(self.worker),
            "postgres": cpu_ms(pids_named("postgres"), with_ended_children=True),
            "redis": cpu_ms(pids_named("redis-server")),
            "machine": machine_busy_ms(),
        }

    def per(self, count: int) -> dict[str, float]:
        after = self._reading()
        return {
            part: (after[part] - self.before[part]) / count if count else float("nan")
            for part in after
        }


def gunicorn_workers(master_pid: int) -> list[int]:
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    return [int(pid) for pid in children]


def process_tree(pid: int) -> list[int]:
    """A process and its children (a prefork Celery worker's pool)."""
    return [pid, *gunicorn_workers(pid)]


def wrk(args: list[str], env: dict) -> dict:
    out = subprocess.run(
        ["wrk", *args], env={**os.environ, **env}, capture_output=True, text=True, check=False
    )
    failures = [line for line in out.stdout.splitlines() if line.startswith("FAILED ")]
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return {**json.loads(line.removeprefix("RESULT ")), "failures": failures}
    if "Requests/sec:" in out.stdout:
        return {"rps": float(out.stdout.split("Requests/sec:")[1].split()[0])}
    raise SystemExit(f"wrk failed: {out.stdout}\n{out.stderr}")


def health_rate(host, seconds=10) -> tuple[float, float]:
    """GET /health/ requests/s, and the whole machine's CPU milliseconds per request."""
    busy = machine_busy_ms()
    rps = wrk(["-t", "2", "-c", "10", "-d", f"{seconds}s", f"http://{host}/health/"], {})["rps"]
    return rps, (machine_busy_ms() - busy) / (rps * seconds)


def run_level(
    users,
    seconds,
    host,
    accounts,
    metrics,
    out_dir,
    master_pid,
    think=0.0,
    worker_pid=None,
    redis_url=None,
) -> dict:
    """One wrk run of `users` connections, each an annotator of `accounts` (those earlier
    levels left with work), who hands over to the next of the connection's share once
    nothing is left for them (bench/annotate.lua). `worker_pid`: the Celery worker
    recomputing results, whose CPU is counted too; `redis_url`: the server whose commands
    per judgment are counted. The result's `finished`: positions in `accounts` of the
    annotators who finished."""
    accounts_file = out_dir / f"accounts-{users}-{think:g}.txt"
    accounts_file.write_text(
        "".join(f"{a['session']} {a['csrf']} {a['token']}\n" for a in accounts)
    )
    before = judgments_saved()
    results_worker = process_tree(worker_pid) if worker_pid else []
    cpu = CpuSplit(gunicorn_workers(master_pid), results_worker)
    commands_before = redis_commands(redis_url)
    result = wrk(
        [
            "-t",
            str(users),
            "-c",
            str(users),
            "-d",
            f"{seconds}s",
            "--timeout",
            "30s",
            "-s",
            str(REPO / "bench" / "annotate.lua"),
            f"http://{host}",
        ],
        {
            "LOAD_ACCOUNTS": str(accounts_file),
            "LOAD_USERS": str(users),
            "LOAD_THINK_MS": str(int(think * 1000)),
            "LOAD_HOST": host,
            "LOAD_METRICS": ",".join(metrics),
        },
    )
    # wrk stops without waiting for the answers still in flight; the server goes on
    # saving them. They belong to this level: counted here, not in the next one's window.
    after = settled_judgments()
    if result["failures"]:
        # What the first failed submissions of each annotator were answered, to read.
        (out_dir / f"failures-{users}-{think:g}.txt").write_text(
            "\n".join(result["failures"]) + "\n"
        )
    saved = after - before
    split = cpu.per(saved)
    commands = redis_commands(redis_url) - commands_before
    return {
        "users": users,
        "think": think,
        "judgments_per_s": result["submitted"] / result["seconds"],
        "requests": result["requests"],
        "wrk_p95": result["wrk_p95"],
        "median": result["p50"],
        "p95": result["p95"],
        "p99": result["p99"],
        "errors": result["failed"] + result["socket_errors"],
        # Of which: answers other than 200, and connections that failed or timed out.
        "failed": result["failed"],
        "socket_errors": result["socket_errors"],
        # Not errors: "nothing to rate now" pages (an annotator at their cap).
        "no_work": result["no_work"],
        "ok": result["submitted"],
        "saved": saved,
        "cpu_ms_per_judgment": split["web"],
        "worker_cpu_ms_per_judgment": split["worker"],
        "postgres_cpu_ms_per_judgment": split["postgres"],
        "redis_cpu_ms_per_judgment": split["redis"],
        "redis_commands_per_judgment": commands / saved if saved and redis_url else float("nan"),
        "machine_cpu_ms_per_judgment": split["machine"],
        # Lua counts from 1.
        "finished": [index - 1 for index in result["finished"]],
        "annotators": users + len(result["finished"]),
    }


def median_run(runs: list[dict]) -> dict:
    """The run with the median judgments/s (its own latencies and counts with it), and
    errors summed over all runs."""
    ordered = sorted(runs, key=lambda run: run["judgments_per_s"])
    chosen = dict(ordered[len(ordered) // 2])
    chosen["errors"] = sum(run["errors"] for run in runs)
    chosen["ok"] = sum(run["ok"] for run in runs)
    chosen["saved"] = sum(run["saved"] for run in runs)
    chosen["runs"] = [round(run["judgments_per_s"], 1) for run in runs]
    return chosen


@contextlib.contextmanager
def autovacuum_on():
    """PostgreSQL with autovacuum on for the bench's run, as every production server has
    it, and back to what the server had afterwards (it is a server-wide setting, read on
    reload). Said in the bench's output."""
    import psycopg

    url = SERVER.replace("postgres://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as c:
        before, set_by_alter_system = c.execute(
            "SELECT setting, COALESCE(sourcefile LIKE '%%postgresql.auto.conf', FALSE)"
            " FROM pg_settings WHERE name = 'autovacuum'"
        ).fetchone()
        c.execute("ALTER SYSTEM SET autovacuum = on")
        c.execute("SELECT pg_reload_conf()")
    try:
        yield before
    finally:
        with psycopg.connect(url, autocommit=True) as c:
            if set_by_alter_system:
                c.execute(f"ALTER SYSTEM SET autovacuum = {'on' if before == 'on' else 'off'}")
            else:
                c.execute("ALTER SYSTEM RESET autovacuum")
            c.execute("SELECT pg_reload_conf()")


def statistics_refresh() -> None:
    """ANALYZE the scratch database, as autovacuum does on its own while tables grow. A
    server run without autovacuum (as on some development machines) would otherwise keep
    planning every query of later runs for the nearly empty tables of the first."""
    with scratch_database(autocommit=True) as c:
        c.execute("ANALYZE")


# The tables every judgment writes: the plans of the loop's statements (and of the
# foreign-key checks PostgreSQL runs at commit) depend on what the planner knows of them.
LOOP_TABLES = (
    "annotation_judgment",
    "annotation_rating",
    "annotation_assignment",
    "annotation_answerexposure",
)


def loop_tables_analyzed_since(moment: float) -> bool:
    """Whether autovacuum has analyzed every table the loop writes since `moment` (the
    machine's clock). Until then a fresh database's plans, and the foreign-key checks'
    plans each connection keeps, are those of empty tables: sequential scans of tables
    growing by a hundred rows a second."""
    with scratch_database(autocommit=True) as c:
        (analyzed,) = c.execute(
            "SELECT COUNT(*) FROM pg_stat_user_tables WHERE relname = ANY(%s)"
            " AND last_autoanalyze > to_timestamp(%s)",
            [list(LOOP_TABLES), moment],
        ).fetchone()
    return analyzed == len(LOOP_TABLES)


def integrity() -> dict:
    """Duplicates, over-assignment, items and characters' progress miscounted, and
    judgments filed under another study than their item's, over everything the run
    saved."""
    with scratch_database() as c:
        duplicates = c.execute(
            "SELECT count(*) FROM (SELECT 1 FROM annotation_judgment "
            "GROUP BY annotator_id, item_id HAVING count(*) > 1) d"
        ).fetchone()[0]
        over = c.execute(
            "SELECT count(*) FROM annotation_item i JOIN annotation_study s ON s.id = i.study_id "
            "WHERE NOT i.is_gold AND i.judgment_count > s.overlap"
        ).fetchone()[0]
        drift = c.execute(
            "SELECT count(*) FROM annotation_item i WHERE i.judgment_count <> "
            "(SELECT count(*) FROM annotation_judgment j WHERE j.item_id = i.id)"
        ).fetchone()[0]
        progress_drift = c.execute(
            "SELECT count(*) FROM annotation_characterprogress p"
            " WHERE (p.items, p.judgments) <> (SELECT count(*), COALESCE(sum(i.judgment_count), 0)"
            "  FROM annotation_item i WHERE i.study_id = p.study_id"
            "  AND i.character_id = p.character_id AND NOT i.is_gold)"
        ).fetchone()[0]
        misfiled = c.execute(
            "SELECT count(*) FROM annotation_judgment j JOIN annotation_item i"
            " ON i.id = j.item_id WHERE j.study_id <> i.study_id"
        ).fetchone()[0]
    return {
        "duplicates": duplicates,
        "over_assigned": over,
        "count_drift": drift,
        "progress_drift": progress_drift,
        "misfiled": misfiled,
    }
