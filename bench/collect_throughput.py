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
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.model_calls import (
    DEMO,
    PUBLISHED,
    prepare_database,
    record,
    record_overhead,
    start_server,
    use_database,
)

DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_collect_bench")
REAL_HUMAN = (PUBLISHED or Path(os.environ.get("CHATANIME_DATA", "/nonexistent"))) / "human.json"
SERVER_CLASS = "tests.fixtures.chat_server.ChatServer"


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

    prepare_database(DATABASE, REAL_HUMAN if REAL_HUMAN.exists() else DEMO / "human.json")
    use_database(DATABASE)
    from dialogues.models import Character, Scenario

    names = ",".join(
        Character.objects.order_by("id").values_list("key", flat=True)[: args.characters]
    )
    numbers = list(Scenario.objects.values_list("number", flat=True))
    scenarios = ",".join(map(str, numbers))
    answers = args.characters * len(numbers) * 2
    print(f"{answers} answers per run: {args.characters} characters x {len(numbers)} scenarios x 2")

    slow, slow_url = start_server(SERVER_CLASS, args.model_seconds)
    try:
        for concurrency in (1, 8, 32):
            rates = []
            for run in range(args.runs):
                seconds, _ = collect(
                    slow_url, f"bench-c{concurrency}-r{run}", names, concurrency, scenarios
                )
                rates.append(answers / seconds)
            record(
                "collect",
                f"answers/s, concurrency {concurrency}, model {args.model_seconds * 1000:.0f} ms",
                f"{statistics.median(rates):.1f} (runs: {', '.join(f'{r:.1f}' for r in rates)})",
            )
    finally:
        slow.kill()

    fast, fast_url = start_server(SERVER_CLASS, 0.0)
    try:
        platform, bare = [], []
        for run in range(args.runs):
            seconds, calls = collect(fast_url, f"bench-overhead-r{run}", names, 1, scenarios)
            platform.append(seconds / calls)
            bare.append(bare_client_seconds_per_call(fast_url, calls))
        record_overhead("collect", platform, bare)
    finally:
        fast.kill()


if __name__ == "__main__":
    main()
