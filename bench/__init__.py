"""Benchmarks. Each script prints its own figures; run under bench/suite.py they also
report their headline figures for the suite's summary table."""

import json
import os


def report(benchmark: str, figure: str, value: str) -> None:
    """Record one headline figure for bench/suite.py (no-op when run alone)."""
    path = os.environ.get("BENCH_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(json.dumps({"benchmark": benchmark, "figure": figure, "value": value}))
            summary.write("\n")
