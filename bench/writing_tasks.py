"""How long do a writer's lease and round-1 hand-in take on a full writing run?

A fresh database with the published dataset imported (26,400 answers, 11 sources), a
writing run over all 20 characters x 60 scenarios (1,200 cells) and 40 writers approved
for every character. Each writer takes a cell (`task_next`: SKIP LOCKED lease) and hands
in round 1 (`round_1_submit`: validation plus the near-duplicate check against the ten
other sources' answers of that cell); then the next writer. Timed inside one process,
medians per operation, on SQLite and PostgreSQL.

    .venv/bin/python bench/writing_tasks.py [--writers 40]
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.import_speed import DEFAULT_DATA, manage, postgres_database, run_script

TIMED = """
import statistics, time
import django
django.setup()
from django.contrib.auth import get_user_model
from annotation.models import AnnotatorProfile, Qualification
from dialogues.importer import import_chatanime
from dialogues.models import Answer, Character, Scenario
from django.utils import timezone
from writing import services
from writing.models import ApplicationStatus, WriterApplication

import_chatanime({data!r})
characters = list(Character.objects.all())
run = services.run_create(
    name="bench", source_slug="fans-bench", characters=characters,
    scenarios=list(Scenario.objects.all()),
)
writers = []
for i in range({writers}):
    user = get_user_model().objects.create(username=f"w{{i}}", email=f"w{{i}}@example.com")
    profile = AnnotatorProfile.objects.create(user=user, consented_at=timezone.now())
    Qualification.objects.bulk_create(
        Qualification(profile=profile, character=c, status="passed") for c in characters)
    WriterApplication.objects.bulk_create(
        WriterApplication(user=user, character=c, sample="样例", status=ApplicationStatus.APPROVED)
        for c in characters)
    writers.append(user)
# A typical fan answer: about 80 characters, typed, not a copy.
text = "别怕！口语考试就像冒险，大声说出来就好了！我陪你一起练，每天说十句，说错了也没关系，伙伴会笑着帮你改的！肉管够，练完就开宴会！加油！"
lease, submit = [], []
for writer in writers:
    started = time.perf_counter()
    task = services.task_next(user=writer)
    lease.append(time.perf_counter() - started)
    started = time.perf_counter()
    services.round_1_submit(user=writer, token=task.token, text=text)
    submit.append(time.perf_counter() - started)
others = Answer.objects.filter(character=task.character, scenario=task.scenario, round=1).count()
print(statistics.median(lease), max(lease), statistics.median(submit), max(submit),
      run.tasks.count(), others)
"""


def time_writers(database_url: str, data: Path, writers: int) -> list[str]:
    return run_script(database_url, TIMED.format(data=str(data), writers=writers)).split()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=40)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    pg_base = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    name = "chatanime_bench_writing"
    with tempfile.TemporaryDirectory() as tmp:
        backends = {"sqlite": f"sqlite:///{tmp}/writing.sqlite3"}
        if not args.sqlite_only:
            url = postgres_database(pg_base, name)
            if url is not None:
                backends["postgresql"] = url
        for backend, url in backends.items():
            manage(url, "migrate", "--noinput")
            lease, lease_max, submit, submit_max, cells, others = time_writers(
                url, args.data, args.writers
            )
            print(
                f"{backend:<11} run of {cells} cells, {args.writers} writers:"
                f"  lease median {float(lease) * 1000:.1f} ms (max {float(lease_max) * 1000:.1f})"
                f"  round-1 hand-in with near-duplicate check against {others} answers"
                f"  median {float(submit) * 1000:.1f} ms (max {float(submit_max) * 1000:.1f})"
            )
            if backend == "postgresql":
                postgres_database(pg_base, name, create=False)


if __name__ == "__main__":
    main()
