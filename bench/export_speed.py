"""Export speed and memory at the published scale, side by side with `psql \\copy`.

On PostgreSQL, builds (or, with `--keep`, reuses) the synthetic study of
`aggregate_scale.py`: the published dataset, 24,000 pairs x 3 judgments, about 1.3 million
ratings. Then, in a fresh child process per run (median of `--runs`):

- our long CSV through COPY (`export_ratings --engine copy`), written to a file;
- our long CSV through the Python rows (`--engine python`), the path SQLite uses;
- `psql \\copy (the same SELECT) TO file`, the floor for getting these rows out.

Prints rows per second, and the peak resident memory of each child process (VmHWM)
beside that of a child that only starts Django and connects, for 10% and for
100% of the judgments (the other 90% marked excluded for the smaller run, then restored),
so that flat memory shows as equal peaks. Also checks that the COPY file and the psql
file are the same bytes.

    .venv/bin/python bench/export_speed.py [--runs 3] [--keep] [--rebuild]
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = "chatanime_export_bench"
DATABASE_URL = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}"

# The peak is read inside the child (VmHWM of its own address space): getrusage/wait4
# would report the bench process's peak too, which a forked child inherits.
CHILD = """
import json, sys, time
import django
django.setup()
from django.db import connection
from annotation.exports import export_write
connection.ensure_connection()

def peak_mib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024

engine, path = sys.argv[1], sys.argv[2]
rows, started = 0, time.perf_counter()
if engine != "baseline":
    with open(path, "wb") as stream:
        rows = export_write(stream, None, "csv", engine=engine).rows
seconds = time.perf_counter() - started
print(json.dumps({"rows": rows, "seconds": seconds, "peak_mib": peak_mib()}))
"""


def server_connection():
    import psycopg

    return psycopg.connect(SERVER.replace("postgres://", "postgresql://"), autocommit=True)


def database_exists() -> bool:
    with server_connection() as c:
        return c.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE]).fetchone()


def recreate_database(drop_only=False):
    with server_connection() as c:
        c.execute(f'DROP DATABASE IF EXISTS "{DATABASE}"')
        if not drop_only:
            c.execute(f'CREATE DATABASE "{DATABASE}"')


def child_env():
    return {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
        "PYTHONPATH": str(REPO),
        "REDIS_URL": "",
    }


def run_child(engine: str, path: Path) -> dict:
    """One export in a fresh process: its rows, seconds and peak memory (MiB)."""
    finished = subprocess.run(
        [sys.executable, "-c", CHILD, engine, str(path)],
        cwd=REPO,
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])


def run_psql(select: str, path: Path) -> dict:
    """`psql \\copy` of the same SELECT: the rows leave PostgreSQL the same way, and psql
    writes them to the file without any Python in between."""
    command = f"\\copy ({select}) TO '{path}' WITH (FORMAT csv)"
    started = time.perf_counter()
    subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", DATABASE_URL, "-c", command],
        env={**os.environ, "PGOPTIONS": "-c extra_float_digits=1"},
        check=True,
    )
    seconds = time.perf_counter() - started
    rows = int(
        subprocess.run(
            [
                "psql",
                "-X",
                "-A",
                "-t",
                "-d",
                DATABASE_URL,
                "-c",
                f"SELECT count(*) FROM ({select}) s",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    return {"rows": rows, "seconds": seconds}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def setup_django():
    os.environ["DATABASE_URL"] = DATABASE_URL
    os.environ["DJANGO_SETTINGS_MODULE"] = "chatanime_site.settings.local"
    os.environ.pop("REDIS_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=REPO,
        check=True,
        capture_output=True,
        env=child_env(),
    )
    import django

    django.setup()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="keep the database for next time")
    parser.add_argument("--rebuild", action="store_true", help="build even if it was kept")
    args = parser.parse_args()

    reuse = database_exists() and not args.rebuild
    if not reuse:
        recreate_database()
    setup_django()
    from django.db import connection

    from annotation.exports.postgres import long_select
    from annotation.models import Rating

    if not reuse or not Rating.objects.exists():
        from bench.aggregate_scale import build_synthetic_study

        started = time.perf_counter()
        build_synthetic_study(args.data)
        print(f"built the synthetic study in {time.perf_counter() - started:.0f} s")
    total = Rating.objects.count()
    print(f"database {DATABASE}: {total:,} ratings")

    connection.ensure_connection()
    select = " ".join(long_select().as_string(connection.connection).split())
    connection.close()

    out = Path(tempfile.mkdtemp(prefix="export-speed-"))
    results = {}
    for name, run in (
        ("COPY (ours)", lambda: run_child("copy", out / "copy.csv")),
        ("Python rows (ours)", lambda: run_child("python", out / "python.csv")),
        ("psql \\copy", lambda: run_psql(select, out / "psql.csv")),
    ):
        samples = [run() for _ in range(args.runs)]
        results[name] = samples
        print(f"  {name}: " + ", ".join(f"{s['seconds']:.2f} s" for s in samples), flush=True)
    # psql writes no header; ours does.
    with open(out / "copy.csv", "rb") as ours:
        ours.readline()
        body = ours.read()
    same = hashlib.sha256(body).hexdigest() == sha256_of(out / "psql.csv")
    python_same = sha256_of(out / "copy.csv") == sha256_of(out / "python.csv")

    memory = {"baseline": run_child("baseline", out / "none")["peak_mib"]}
    with connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_judgment SET excluded = (id % 10 <> 0)")
    try:
        memory["copy 10%"] = run_child("copy", out / "copy10.csv")
        memory["python 10%"] = run_child("python", out / "python10.csv")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("UPDATE annotation_judgment SET excluded = false")
    connection.close()

    print()
    print(f"Long CSV of {total:,} ratings, median of {args.runs} runs (each a fresh process)")
    print(f"{'path':<20} {'seconds':>8} {'rows/s':>11} {'peak RSS 100%':>14} {'peak RSS 10%':>13}")
    small = {"COPY (ours)": memory["copy 10%"], "Python rows (ours)": memory["python 10%"]}
    for name, samples in results.items():
        seconds = statistics.median(s["seconds"] for s in samples)
        rows = samples[0]["rows"]
        peak = f"{max(s['peak_mib'] for s in samples):.0f} MiB" if "peak_mib" in samples[0] else "–"
        tenth = f"{small[name]['peak_mib']:.0f} MiB" if name in small else "–"
        print(f"{name:<20} {seconds:>8.2f} {rows / seconds:>11,.0f} {peak:>14} {tenth:>13}")
        report(
            f"long CSV export, {total:,} ratings",
            name,
            f"{seconds:.1f} s median, {rows / seconds:,.0f} rows/s, peak RSS {peak} (10%: {tenth})",
        )
    print(
        f"baseline (Django started, connected, no export): peak RSS {memory['baseline']:.0f} MiB; "
        f"10% run rows: COPY {memory['copy 10%']['rows']:,}, Python {memory['python 10%']['rows']:,}"
    )
    print(f"COPY file == psql \\copy file (after our header): {'yes' if same else 'NO'}")
    print(f"COPY file == Python-rows file: {'yes' if python_same else 'NO'}")
    for path in out.iterdir():
        path.unlink()
    out.rmdir()
    if not args.keep:
        recreate_database(drop_only=True)


if __name__ == "__main__":
    main()
