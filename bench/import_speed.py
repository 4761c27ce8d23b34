"""How long does importing the published ChatAnime dataset take?

Times `import_chatanime` of the whole dataset (11 sources, 26,400 answers) into an empty
database, several times, on SQLite and — when BENCH_POSTGRES_URL (default: the local
server) answers — on PostgreSQL, plus the no-op re-import. Prints the median and spread.

    .venv/bin/python bench/import_speed.py [--runs 5] [--data PATH]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"


def scratch_env(database_url: str) -> dict[str, str]:
    """The environment of a benchmark's child process: the local settings on this
    database, quiet logs, and no broker, so that work queued for Celery runs in-process."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "DATABASE_URL": database_url,
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    return env


def manage(database_url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=scratch_env(database_url),
        check=True,
        capture_output=True,
    )


def run_script(database_url: str, code: str) -> str:
    """Run `python -c code` against this database (see `scratch_env`) and return what it
    printed; a failing script ends the benchmark with its error."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=scratch_env(database_url),
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.exit(done.stderr)
    return done.stdout


def time_import_in_process(database_url: str, data: Path) -> tuple[float, float]:
    """(first import, re-import) seconds, timed inside one process so interpreter and
    Django start-up are not counted."""
    code = (
        "import time, django; django.setup();"
        "from dialogues.importer import import_chatanime;"
        f"t=time.perf_counter(); r=import_chatanime({str(data)!r}); a=time.perf_counter()-t;"
        "assert r.answers_created == 26400, r;"
        f"t=time.perf_counter(); r=import_chatanime({str(data)!r}); b=time.perf_counter()-t;"
        "assert not r.changed_anything;"
        "print(a, b)"
    )
    out = run_script(database_url, code).split()
    return float(out[0]), float(out[1])


def postgres_database(base_url: str, name: str, *, create: bool = True) -> str | None:
    """Drop and (unless told not to) create a scratch database; None without a server."""
    admin = f"{base_url.rsplit('/', 1)[0]}/postgres"
    try:
        import psycopg

        with psycopg.connect(admin.replace("postgres://", "postgresql://"), autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}"')
            if create:
                c.execute(f'CREATE DATABASE "{name}"')
    except Exception as error:  # the server is optional for this benchmark
        print(f"PostgreSQL skipped: {error}")
        return None
    return f"{base_url.rsplit('/', 1)[0]}/{name}"


def describe(samples: list[float]) -> str:
    return (
        f"median {statistics.median(samples):6.2f} s   "
        f"min {min(samples):6.2f} s   max {max(samples):6.2f} s   (n={len(samples)})"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"no dataset at {args.data}")

    backends = {}
    with tempfile.TemporaryDirectory() as tmp:
        backends["sqlite"] = lambda i: f"sqlite:///{tmp}/bench-{i}.sqlite3"
        pg_base = os.environ.get(
            "BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
        )
        if postgres_database(pg_base, "chatanime_bench_probe"):
            backends["postgresql"] = lambda i: postgres_database(pg_base, f"chatanime_bench_{i}")

        print(
            f"Import of {args.data} ({len(list(args.data.glob('*.json')))} files), {args.runs} runs"
        )
        for backend, make_url in backends.items():
            first, again = [], []
            for i in range(args.runs):
                url = make_url(i)
                manage(url, "migrate", "--noinput")
                a, b = time_import_in_process(url, args.data)
                first.append(a)
                again.append(b)
            print(f"{backend:<11} first import   {describe(first)}")
            report("import 26,400 answers", backend, f"{statistics.median(first):.2f} s median")
            print(f"{backend:<11} re-import      {describe(again)}")
        if "postgresql" in backends:
            postgres_database(pg_base, "chatanime_bench_probe", create=False)
            for i in range(args.runs):
                postgres_database(pg_base, f"chatanime_bench_{i}", create=False)


if __name__ == "__main__":
    main()
