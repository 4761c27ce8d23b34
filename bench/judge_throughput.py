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

DATABASE = os.environ.get("BENCH_DATABASE", "chatanime_judge_bench")
DATA = PUBLISHED or DEMO
SERVER_CLASS = "tests.fixtures.judge_server.JudgeServer"


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

    prepare_database(DATABASE, DATA)
    use_database(DATABASE)
    study = make_study()
    print(f"{args.items} pairs per run from {DATA.name} ({study.items.count()} in the study)")

    slow, slow_url = start_server(SERVER_CLASS, args.model_seconds)
    try:
        for concurrency in (1, 8, 32):
            rates = []
            for run in range(args.runs):
                seconds = judge(
                    slow_url, study, f"bench-c{concurrency}-r{run}", args.items, concurrency
                )
                rates.append(args.items / seconds)
            record(
                "judge",
                f"judge calls/s, concurrency {concurrency}, model {args.model_seconds * 1000:.0f} ms",
                f"{statistics.median(rates):.1f} (runs: {', '.join(f'{r:.1f}' for r in rates)})",
            )
    finally:
        slow.kill()

    fast, fast_url = start_server(SERVER_CLASS, 0.0)
    try:
        platform, bare = [], []
        for run in range(args.runs):
            model = f"bench-overhead-r{run}"
            platform.append(judge(fast_url, study, model, args.items, 1) / args.items)
            bare.append(bare_client_seconds_per_call(fast_url, study, model))
        record_overhead("judge", platform, bare)
    finally:
        fast.kill()


if __name__ == "__main__":
    main()
