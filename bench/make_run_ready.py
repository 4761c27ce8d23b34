"""How long until `make run DATA=<published data>` serves, from a fresh clone?

For each run: `git clone` this repository (its committed HEAD) into a temporary
directory, link its `.venv` to this checkout's virtualenv (so that no package is
downloaded; `make` still checks the locked requirements against it), then start
`make run DATA=... PORT=...` on the embedded defaults (SQLite, tasks in-process) and
time until http://127.0.0.1:PORT/ answers. That covers migrate, the import of the
26,400 answers, seed_demo (quiz bank, demo study, simulated results study) and the
server's start. Prints every run (with the CPU time of the steps before the server and the
load average, as the machine may be shared) and the medians.

    .venv/bin/python bench/make_run_ready.py [--runs 3] [--data PATH]
"""

import argparse
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench import report  # noqa: E402

DEFAULT_DATA = Path("/work/shared/data/chatanime")
if not DEFAULT_DATA.exists():
    DEFAULT_DATA = REPO.parent / "shared" / "data" / "chatanime"
GIVE_UP_AFTER = 600  # seconds; a run that takes this long has failed, not just been slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status < 500
    except urllib.error.HTTPError as error:
        return error.code < 500
    except OSError:
        return False


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(data: Path) -> tuple[float, float]:
    """(seconds until the site answers, CPU seconds of the steps before the server)."""
    with tempfile.TemporaryDirectory(prefix="make-run-") as tmp:
        clone = Path(tmp) / "chatanime"
        subprocess.run(
            ["git", "clone", "--quiet", str(REPO), str(clone)], check=True, capture_output=True
        )
        (clone / ".venv").symlink_to((REPO / ".venv").resolve())
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        cpu_before = children_cpu_seconds()
        log_path = Path(tmp) / "make-run.log"
        with log_path.open("wb") as log:
            started = time.perf_counter()
            process = subprocess.Popen(
                ["make", "run", f"DATA={data}", f"PORT={port}"],
                cwd=clone,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                while not answers(f"http://127.0.0.1:{port}/"):
                    if process.poll() is not None:
                        sys.exit(
                            f"make run stopped with {process.returncode}:\n"
                            + log_path.read_text(errors="replace")[-3000:]
                        )
                    if time.perf_counter() - started > GIVE_UP_AFTER:
                        sys.exit(f"make run did not serve within {GIVE_UP_AFTER} s")
                    time.sleep(0.2)
                ready = time.perf_counter() - started
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait()
        # The steps make waited for (install check, migrate, import, seed_demo); the
        # server's own start is not included, as nobody waits for the killed server.
        return ready, children_cpu_seconds() - cpu_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    seconds, cpu = [], []
    for run in range(1, args.runs + 1):
        load = os.getloadavg()[0]
        ready, used = one_run(args.data.resolve())
        seconds.append(ready)
        cpu.append(used)
        # The machine may be shared: the load when the run started, and the CPU time the
        # run needed, put the wall-clock figure in context.
        print(
            f"run {run}: serving after {ready:.1f} s, {used:.1f} CPU s "
            f"(load average {load:.1f} on {os.cpu_count()} CPUs at the start)",
            flush=True,
        )
    median = statistics.median(seconds)
    print(
        f"make run DATA={args.data}: serving after {median:.1f} s median of {len(seconds)} "
        f"(min {min(seconds):.1f}, max {max(seconds):.1f}) from a fresh clone; "
        f"{statistics.median(cpu):.1f} CPU s median"
    )
    report("make_run_ready", "fresh clone to serving, published data", f"{median:.1f} s")


if __name__ == "__main__":
    main()
