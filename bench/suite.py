"""Every benchmark in one run, then one table of their headline figures.

Runs each script in bench/ in turn (their own output is shown as it comes), each one
recording its headline figures, and prints the table at the end. Needs PostgreSQL and
Redis (BENCH_POSTGRES_URL, BENCH_REDIS_URL to override the local defaults) and the bench
requirements (`make bench` installs them). Takes about half an hour on 2 cores, most of
it building the 1.3-million-rating study.

    make bench              # or: .venv/bin/python bench/suite.py [--only load,aggregate]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (name, script and arguments), in the order they run.
BENCHMARKS = [
    ("import", ["bench/import_speed.py", "--runs", "3"]),
    ("make-run", ["bench/make_run_ready.py", "--runs", "3"]),
    ("open", ["bench/open_study.py", "--runs", "3"]),
    ("completion", ["bench/study_completion.py", "--seeds", "4"]),
    ("latency", ["bench/annotate_latency.py", "--requests", "100"]),
    ("load", ["bench/load.py"]),
    ("panel-burst", ["bench/panel_burst.py"]),
    ("aggregate", ["bench/aggregate_scale.py", "--runs", "3", "--keep"]),
    ("export", ["bench/export_speed.py", "--runs", "3"]),
    ("freshness", ["bench/results_latency.py", "--runs", "5"]),
    ("collect", ["bench/collect_throughput.py", "--runs", "3"]),
    ("judge", ["bench/judge_throughput.py", "--runs", "3"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", help="comma-separated names: " + ", ".join(n for n, _ in BENCHMARKS)
    )
    args = parser.parse_args()
    chosen = set(args.only.split(",")) if args.only else {n for n, _ in BENCHMARKS}

    summary = Path(tempfile.mkstemp(prefix="chatanime-bench-", suffix=".jsonl")[1])
    env = dict(os.environ, BENCH_SUMMARY=str(summary))
    failed = []
    for name, command in BENCHMARKS:
        if name not in chosen or not (REPO / command[0]).exists():
            continue
        print(f"\n=== {name}: {' '.join(command)}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, *command], cwd=REPO, env=env, check=False)
        print(f"=== {name}: {time.perf_counter() - started:.0f} s, exit {result.returncode}")
        if result.returncode:
            failed.append(name)

    rows = [json.loads(line) for line in summary.read_text(encoding="utf-8").splitlines()]
    widths = [
        max([len(h), *(len(r[k]) for r in rows)])
        for h, k in zip(
            ("benchmark", "setting", "figure"), ("benchmark", "figure", "value"), strict=True
        )
    ]
    print(
        "\n"
        + "  ".join(
            h.ljust(w) for h, w in zip(("benchmark", "setting", "figure"), widths, strict=True)
        )
    )
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(
            "  ".join(
                r[k].ljust(w) for k, w in zip(("benchmark", "figure", "value"), widths, strict=True)
            )
        )
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
