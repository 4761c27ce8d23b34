"""How fast does `judge_study` judge, and what does the platform add to each call?

Starts the test suite's judge server (tests/fixtures/judge_server.py) in its own process,
so it does not share this process's interpreter lock, and judges a study's pairs from it
on PostgreSQL with the Redis limiter, exactly as the command does, at concurrency 1, 8
and 32:

- judge calls per second with the server taking `--model-seconds` per reply (a stand-in
  for a model's latency), median of `--runs` runs of `--items` pairs each (a fresh run,
  under another model name, each time);
- the platform's overhead per call: the wall time per call of a run at concurrency 1
  against a server that answers at once, minus the time the bare `openai` client takes
  for the same requests. That difference is the limiter, the prompt and rubric, reading
  the reply, and the call's and its ratings' writes.

    .venv/bin/python bench/judge_throughput.py [--runs 3] [--items 300] [--model-seconds 0.05]

The study is the published data's (all characters, round 1, every model against the fans)
when ../shared/data/chatanime is there, else the demo data's.
"""

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SERVER = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_judge_bench")
DATABASE_URL = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
PUBLISHED = next(
    (
        base / "shared" / "data" / "chatanime"
        for base in (REPO.parent, REPO.parent.parent)
        if (base / "shared" / "data" / "chatanime" / "human.json").exists()
    ),
    None,
)
DATA = PUBLISHED or REPO / "dialogues" / "demo_data"

SERVE = """
import sys, time
from tests.fixtures.judge_server import JudgeServer
server = JudgeServer().start()
server.delay = float(sys.argv[1])
print(server.url, flush=True)
while True:
    time.sleep(3600)
"""


def record(figure: str, value: str) -> None:
    line = f"  {figure}: {value}"
    print(line, flush=True)
    summary = os.environ.get("BENCH_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as file:
            entry = {"benchmark": "judge", "figure": figure, "value": value}
            file.write(json.dumps(entry) + "\n")


def start_server(delay: float) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(delay)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    return process, process.stdout.readline().strip()


def prepare_database() -> None:
    import psycopg

    with psycopg.connect(SERVER, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {DATABASE}")
    env = {**os.environ, "DATABASE_URL": DATABASE_URL, "DJANGO_LOG_LEVEL": "WARNING"}
    env["DJANGO_SETTINGS_MODULE"] = "chatanime_site.settings.local"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True
    )
    subprocess.run(
        [sys.executable, "manage.py", "import_chatanime", str(DATA)],
        cwd=REPO, env=env, check=True, capture_output=True,
    )  # fmt: skip


def make_study():
    from annotation import services
    from dialogues.models import Character, Source, SourceKind

    study = services.study_create(
        name="Judge bench",
        reference=Source.objects.get(kind=SourceKind.HUMAN),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=list(Character.objects.all()),
        rounds=(1,),
        overlap=1,
    )
    services.study_open(study=study)
    return study


def judge(url: str, study, model: str, items: int, concurrency: int) -> float:
    from django.core.management import call_command

    started = time.perf_counter()
    call_command(
        "judge_study", "--study", study.slug, "--base-url", url, "--model", model,
        "--api-key-env", "BENCH_KEY", "--items", str(items),
        "--concurrency", str(concurrency), "--rate", "1000000",
        stdout=io.StringIO(),
    )  # fmt: skip
    return time.perf_counter() - started


def bare_client_seconds_per_call(url: str, study, model: str) -> float:
    """The bare client sending the very requests the run sent, one after the other."""
    import openai

    from judges.models import JudgeRun
    from judges.prompts import response_format, rubric_metrics
    from judges.selectors import metrics_of_pairs
    from judges.services.calls import _messages

    run = JudgeRun.objects.get(study=study, model=model)
    extra = {"response_format": response_format(rubric_metrics(metrics_of_pairs(), "zh"))}
    requests = [_messages(run, call.item, 0) for call in run.calls.select_related("item")]
    client = openai.OpenAI(base_url=url, api_key="bench", max_retries=0)
    started = time.perf_counter()
    for messages in requests:
        client.chat.completions.create(
            model=model, messages=messages, temperature=0, max_tokens=1024, **extra
        )
    return (time.perf_counter() - started) / len(requests)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--items", type=int, default=300, help="pairs judged per run")
    parser.add_argument("--model-seconds", type=float, default=0.05)
    args = parser.parse_args()

    prepare_database()
    os.environ.update(
        DATABASE_URL=DATABASE_URL,
        REDIS_URL=REDIS_URL,
        DJANGO_SETTINGS_MODULE="chatanime_site.settings.local",
        DJANGO_LOG_LEVEL="WARNING",
        BENCH_KEY="bench",
    )
    import django

    django.setup()
    study = make_study()
    print(f"{args.items} pairs per run from {DATA.name} ({study.items.count()} in the study)")

    slow, slow_url = start_server(args.model_seconds)
    try:
        for concurrency in (1, 8, 32):
            rates = []
            for run in range(args.runs):
                seconds = judge(
                    slow_url, study, f"bench-c{concurrency}-r{run}", args.items, concurrency
                )
                rates.append(args.items / seconds)
            record(
                f"judge calls/s, concurrency {concurrency}, model {args.model_seconds * 1000:.0f} ms",
                f"{statistics.median(rates):.1f} (runs: {', '.join(f'{r:.1f}' for r in rates)})",
            )
    finally:
        slow.kill()

    fast, fast_url = start_server(0.0)
    try:
        platform, bare = [], []
        for run in range(args.runs):
            model = f"bench-overhead-r{run}"
            platform.append(judge(fast_url, study, model, args.items, 1) / args.items)
            bare.append(bare_client_seconds_per_call(fast_url, study, model))
        overhead = [1000 * (p - b) for p, b in zip(platform, bare, strict=True)]
        record("ms per call, platform (concurrency 1)", f"{1000 * statistics.median(platform):.2f}")
        record("ms per call, bare openai client", f"{1000 * statistics.median(bare):.2f}")
        record("platform overhead per call (ms)", f"{statistics.median(overhead):.2f}")
    finally:
        fast.kill()


if __name__ == "__main__":
    main()
