"""How long does opening the full published study take (item generation)?

For each run: a fresh database with the published dataset imported, then `create_study`
for every LLM against `human`, all 20 characters, both rounds (24,000 pairs, plus 96,000
exposure rows and 48,000 slots), timed around `study_open` only. Median of several runs
on SQLite and PostgreSQL.

    .venv/bin/python bench/open_study.py [--runs 3]
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import report
from bench.import_speed import DEFAULT_DATA, manage, postgres_database, run_script

TIMED = """
import time, django
django.setup()
from annotation import services
from dialogues.importer import import_chatanime
from dialogues.models import Character, Source, SourceKind
import_chatanime({data!r})
study = services.study_create(
    name="bench", reference=Source.objects.get(slug="human"),
    compared=list(Source.objects.filter(kind=SourceKind.LLM)), characters=list(Character.objects.all()),
)
started = time.perf_counter()
items = services.study_open(study=study)
print(time.perf_counter() - started, items)
"""


def time_open(database_url: str, data: Path) -> tuple[float, int]:
    out = run_script(database_url, TIMED.format(data=str(data))).split()
    return float(out[0]), int(out[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    pg_base = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    with tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": lambda i: f"sqlite:///{tmp}/open-{i}.sqlite3"}
        if postgres_database(pg_base, "chatanime_bench_probe", create=False) is not None:
            backends["postgresql"] = lambda i: postgres_database(
                pg_base, f"chatanime_bench_open_{i}"
            )
        for backend, make_url in backends.items():
            seconds = []
            for i in range(args.runs):
                url = make_url(i)
                manage(url, "migrate", "--noinput")
                elapsed, items = time_open(url, args.data)
                seconds.append(elapsed)
                if backend == "postgresql":
                    postgres_database(pg_base, f"chatanime_bench_open_{i}", create=False)
            report(
                f"open the full study ({items} items)",
                backend,
                f"{statistics.median(seconds):.2f} s median",
            )
            print(
                f"{backend:<11} open study ({items} items)  median {statistics.median(seconds):.2f} s"
                f"  min {min(seconds):.2f} s  max {max(seconds):.2f} s  (n={len(seconds)})"
            )


if __name__ == "__main__":
    main()
