"""CPU of one results recompute (`services.study_recompute`: the quality flags and the
results document, as the worker runs it), in-process: the process's own CPU and that of
its PostgreSQL backend, read from the kernel, medians of `--repeat` recomputes after one
that warms the process up. Runs on a fresh copy of the database `bench/load.py --keep`
left (the full study open, some thousands of judgments), so nothing it writes stays.

    .venv/bin/python bench/load.py --users 10 --crowd '' --seconds 35 --keep
    .venv/bin/python bench/recompute_cpu.py --repeat 10

To compare two commits, run the script of each checkout against the same kept database.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench import load_stack  # noqa: E402
from bench.load_stack import admin_execute  # noqa: E402
from bench.loop_cpu import SCRATCH, django_env, fresh_copy  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="chatanime_bench_load", help="kept by load.py")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    fresh_copy(args.database)
    try:
        python_ms, postgres_ms, judgments = measure(args.repeat)
    finally:
        admin_execute(f'DROP DATABASE IF EXISTS "{SCRATCH}"')
    print(
        f"recompute of a study of {judgments} judgments, median of {args.repeat}: "
        f"Python {statistics.median(python_ms):.0f} ms "
        f"({min(python_ms):.0f}-{max(python_ms):.0f}), "
        f"PostgreSQL {statistics.median(postgres_ms):.0f} ms "
        f"({min(postgres_ms):.0f}-{max(postgres_ms):.0f})"
    )


def measure(repeat: int) -> tuple[list[float], list[float], int]:
    os.environ.update(django_env())
    import django

    django.setup()
    from django.db import connection

    from annotation.models import Judgment, Study, StudyStatus
    from annotation.services import study_recompute

    study = Study.objects.get(status=StudyStatus.OPEN)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()

    def backend_cpu() -> float:
        return load_stack.cpu_ms([backend]) / 1000

    try:
        study_recompute(study=study)
        python_ms, postgres_ms = [], []
        for _ in range(repeat):
            own, database = time.process_time(), backend_cpu()
            study_recompute(study=study)
            python_ms.append((time.process_time() - own) * 1000)
            postgres_ms.append((backend_cpu() - database) * 1000)
        return python_ms, postgres_ms, Judgment.objects.filter(study=study).count()
    finally:
        # The copy is dropped next, which needs every connection to it closed.
        connection.close()


if __name__ == "__main__":
    main()
