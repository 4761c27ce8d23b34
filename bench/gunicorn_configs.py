"""Which gunicorn workers x threads carry the annotator loop best on this machine.

Runs bench/load.py once per configuration (same stack, same data, closed-loop annotators)
and prints one row per configuration: judgments/s (median of the runs), p50/p95 and CPU
milliseconds per judgment, and GET /health/ of the same server.

    .venv/bin/python bench/gunicorn_configs.py [--configs 2x4,3x4,4x2,5x1] [--users 50]

Each configuration imports the data and opens the study again (about a minute) before
its measured runs; compare the rows with each other, not with another day's figures.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(workers: int, threads: int, args) -> dict:
    command = [
        sys.executable,
        str(REPO / "bench" / "load.py"),
        f"--users={args.users}",
        f"--seconds={args.seconds}",
        f"--repeat={args.repeat}",
        "--crowd=",
        f"--workers={workers}",
        f"--threads={threads}",
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    runs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    health = re.search(r"GET /health/: (\d+) req/s", out)
    return {
        "judgments_per_s": statistics.median(r["judgments_per_s"] for r in runs),
        "runs": [round(r["judgments_per_s"], 1) for r in runs],
        "p50": statistics.median(r["median"] for r in runs),
        "p95": statistics.median(r["p95"] for r in runs),
        "cpu": statistics.median(r["cpu_ms_per_judgment"] for r in runs),
        "health": int(health.group(1)) if health else 0,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="2x4,3x4,3x8,4x2,5x1", help="workers x threads")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for config in args.configs.split(","):
        workers, threads = (int(n) for n in config.split("x"))
        figures = run(workers, threads, args)
        rows.append((workers, threads, figures))
        print(json.dumps({"workers": workers, "threads": threads, **figures}), flush=True)
    print(
        f"\n{args.users} closed-loop annotators, {args.seconds} s per run, median of "
        f"{args.repeat} run(s)"
    )
    print("workers threads  judg./s  p50 ms  p95 ms  CPU ms/j  /health/  runs")
    for workers, threads, f in rows:
        print(
            f"{workers:7} {threads:7} {f['judgments_per_s']:8.1f} {f['p50']:7.0f} {f['p95']:7.0f}"
            f" {f['cpu']:9.0f} {f['health']:9}  {f['runs']}"
        )


if __name__ == "__main__":
    main()
