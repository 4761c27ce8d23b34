"""gunicorn's settings for the site, read from the working directory by every gunicorn
started there (docker-compose, the Dockerfile, scripts/serve, bench/load.py). The
environment overrides them: GUNICORN_WORKERS, GUNICORN_THREADS, GUNICORN_BIND.

Why these numbers: a request spends most of its time in Python, which one process runs on
one core at a time, and the rest waiting for PostgreSQL and Redis on the same machine. One
process per core plus one keeps both cores busy while a process waits; a few threads per
process overlap those waits without the memory of more processes. Measured on 2 cores with
50 annotators in a closed loop (`bench/gunicorn_configs.py`, median of 3 runs of 30 s):
3 workers x 4 threads 45.5 judgments/s (p95 1.9 s), 2 x 8 42.8 (2.0 s), 4 x 2 39.9
(3.5 s); single runs of 5 x 1 and 3 x 8 were no better. Again once the loop cost a fifth of
that (`--users 50 --seconds 20 --repeat 3`, medians): 3 x 4 128.7 judgments/s (p95 0.68 s),
2 x 4 134.1 (0.64 s), 2 x 8 127.2 (0.71 s), 4 x 2 128.1 (0.97 s), all within the runs' own
spread (113-145). Run it again on other hardware."""

import multiprocessing
import os

workers = int(os.environ.get("GUNICORN_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("GUNICORN_THREADS", 4))
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
timeout = 60
# A crowd that arrives at once queues here instead of being refused.
backlog = 2048
# Annotators pause for tens of seconds between items; with gunicorn's default of 2 s
# their connection is closed under them and the next submission pays a new one.
keepalive = 75
