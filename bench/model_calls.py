"""What the benchmarks of model calls share (collect_throughput.py, judge_throughput.py):
one of the test suite's OpenAI-compatible servers in its own process, so that it does not
share the benchmark's interpreter lock; a fresh PostgreSQL database with answers imported;
the figures printed and recorded for bench/suite.py."""

import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench import report

REPO = Path(__file__).resolve().parents[1]
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
# The published answers beside the checkout, or beside the directory holding it (a
# worktree); None without them.
PUBLISHED = next(
    (
        base / "shared" / "data" / "chatanime"
        for base in (REPO.parent, REPO.parent.parent)
        if (base / "shared" / "data" / "chatanime" / "human.json").exists()
    ),
    None,
)
DEMO = REPO / "dialogues" / "demo_data"

SERVE = """
import importlib, sys, time
module, name = sys.argv[1].rsplit(".", 1)
server = getattr(importlib.import_module(module), name)().start()
server.delay = float(sys.argv[2])
print(server.url, flush=True)
while True:
    time.sleep(3600)
"""


def database_url(database: str) -> str:
    return f"{SERVER.rsplit('/', 1)[0]}/{database}"


def record(benchmark: str, figure: str, value: str) -> None:
    print(f"  {figure}: {value}", flush=True)
    report(benchmark, figure, value)


def record_overhead(benchmark: str, platform: list[float], bare: list[float]) -> None:
    """Seconds per call through the platform and through the bare `openai` client, run by
    run: the medians, and the median of what the platform adds."""
    overhead = [1000 * (p - b) for p, b in zip(platform, bare, strict=True)]
    record(
        benchmark,
        "ms per call, platform (concurrency 1)",
        f"{1000 * statistics.median(platform):.2f}",
    )
    record(benchmark, "ms per call, bare openai client", f"{1000 * statistics.median(bare):.2f}")
    record(benchmark, "platform overhead per call (ms)", f"{statistics.median(overhead):.2f}")


def start_server(server: str, delay: float) -> tuple[subprocess.Popen, str]:
    """The server class `server` (dotted path) answering each request after `delay`
    seconds, and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, server, str(delay)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def prepare_database(database: str, data: Path) -> None:
    """`database` dropped, created, migrated, and `data` (a ChatAnime file or folder)
    imported into it."""
    import psycopg

    with psycopg.connect(SERVER, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {database}")
    env = {**os.environ, "DATABASE_URL": database_url(database), "DJANGO_LOG_LEVEL": "WARNING"}
    env["DJANGO_SETTINGS_MODULE"] = "chatanime_site.settings.local"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True
    )
    subprocess.run(
        [sys.executable, "manage.py", "import_chatanime", str(data)],
        cwd=REPO, env=env, check=True, capture_output=True,
    )  # fmt: skip


def use_database(database: str) -> None:
    """Django set up in this process on `database` and the Redis limiter, with the key
    the commands are given (`--api-key-env BENCH_KEY`)."""
    os.environ.update(
        DATABASE_URL=database_url(database),
        REDIS_URL=REDIS_URL,
        DJANGO_SETTINGS_MODULE="chatanime_site.settings.local",
        DJANGO_LOG_LEVEL="WARNING",
        BENCH_KEY="bench",
    )
    import django

    django.setup()
