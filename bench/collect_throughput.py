"""How fast does `collect_answers` collect, and what does the platform add to each call?

Starts the test suite's OpenAI-compatible server in its own process (so it does not
share this process's interpreter lock) and collects fresh sources from it on PostgreSQL
with the Redis limiter, exactly as the command does, at concurrency 1, 8 and 32:

- answers per second with the server taking `--model-seconds` per reply (a stand-in for
  a model's latency; 0 measures the platform alone), median of `--runs` runs;
- the platform's overhead per call: the wall time per call of a collection at
  concurrency 1 with a server that answers at once, minus the time the bare `openai`
  client takes for the same calls. That difference is the limiter, the guards, the
  prompt, the database writes and the call records.

    .venv/bin/python bench/collect_throughput.py [--runs 3] [--characters 4] [--model-seconds 0.05]
"""

import argparse
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
DATABASE = "chatanime_collect_bench"
DATABASE_URL = f"{SERVER.rsplit('/', 1)[0]}/{DATABASE}"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/7")
REAL_HUMAN = next(
    (
        base / "shared" / "data" / "chatanime" / "human.json"
        for base in (REPO.parent, REPO.parent.parent)
        if (base / "shared" / "data" / "chatanime" / "human.json").exists()
    ),
    Path(os.environ.get("CHATANIME_DATA", "/nonexistent")) / "human.json",
)
DEMO = REPO / "dialogues" / "demo_data"

SERVE = """
import sys, time
from tests.fixtures.chat_server import ChatServer
server = ChatServer().start()
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
            entry = {"benchmark": "collect", "figure": figure, "value": value}
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
    data = REAL_HUMAN if REAL_HUMAN.exists() else DEMO / "human.json"
    subprocess.run(
        [sys.executable, "manage.py", "import_chatanime", str(data)],
        cwd=REPO, env=env, check=True, capture_output=True,
    )  # fmt: skip


def collect(
    url: str, slug: str, characters: str, concurrency: int, scenarios: str
) -> tuple[float, int]:
    """Seconds to collect a fresh source, and how many calls it made."""
    import io

    from django.core.management import call_command

    from collection.models import ApiCall

    started = time.perf_counter()
    call_command(
        "collect_answers",
        "--source", slug, "--base-url", url, "--model", "bench-model",
        "--api-key-env", "BENCH_KEY", "--simulator-base-url", url,
        "--simulator-model", "bench-simulator", "--simulator-api-key-env", "BENCH_KEY",
        "--characters", characters, "--scenarios", scenarios,
        "--concurrency", str(concurrency), "--rate", "1000000",
        stdout=io.StringIO(),
    )  # fmt: skip
    seconds = time.perf_counter() - started
    return seconds, ApiCall.objects.filter(run__source__slug=slug).count()


def bare_client_seconds_per_call(url: str, calls: int) -> float:
    import openai

    client = openai.OpenAI(base_url=url, api_key="bench", max_retries=0)
    messages = [
        {"role": "system", "content": "你现在是《海贼王》中的路飞。" * 20},
        {"role": "user", "content": "期末要考口语了，我发音不好，好紧张。"},
    ]
    started = time.perf_counter()
    for _ in range(calls):
        client.chat.completions.create(model="bench-model", messages=messages, max_tokens=512)
    return (time.perf_counter() - started) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--characters", type=int, default=4, help="characters x 60 scenarios")
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
    from dialogues.models import Character, Scenario

    names = ",".join(
        Character.objects.order_by("id").values_list("key", flat=True)[: args.characters]
    )
    numbers = list(Scenario.objects.values_list("number", flat=True))
    scenarios = ",".join(map(str, numbers))
    answers = args.characters * len(numbers) * 2
    print(f"{answers} answers per run: {args.characters} characters x {len(numbers)} scenarios x 2")

    slow, slow_url = start_server(args.model_seconds)
    try:
        for concurrency in (1, 8, 32):
            rates = []
            for run in range(args.runs):
                seconds, _ = collect(
                    slow_url, f"bench-c{concurrency}-r{run}", names, concurrency, scenarios
                )
                rates.append(answers / seconds)
            record(
                f"answers/s, concurrency {concurrency}, model {args.model_seconds * 1000:.0f} ms",
                f"{statistics.median(rates):.1f} (runs: {', '.join(f'{r:.1f}' for r in rates)})",
            )
    finally:
        slow.kill()

    fast, fast_url = start_server(0.0)
    try:
        platform, bare = [], []
        for run in range(args.runs):
            seconds, calls = collect(fast_url, f"bench-overhead-r{run}", names, 1, scenarios)
            platform.append(seconds / calls)
            bare.append(bare_client_seconds_per_call(fast_url, calls))
        overhead = [1000 * (p - b) for p, b in zip(platform, bare, strict=True)]
        record("ms per call, platform (concurrency 1)", f"{1000 * statistics.median(platform):.2f}")
        record("ms per call, bare openai client", f"{1000 * statistics.median(bare):.2f}")
        record("platform overhead per call (ms)", f"{statistics.median(overhead):.2f}")
    finally:
        fast.kill()


if __name__ == "__main__":
    main()
