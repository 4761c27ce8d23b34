"""gunicorn's settings for the site, read from the working directory by every gunicorn
started there (docker-compose, the Dockerfile, scripts/serve, bench/load.py). The
environment overrides them: GUNICORN_WORKERS, GUNICORN_THREADS, GUNICORN_BIND.

Why these numbers (not yet compared against other settings by a measurement; bench/load.py
with GUNICORN_WORKERS / GUNICORN_THREADS set is how to do it): a request spends most of
its time in Python, which one process runs on one core at a
time, and the rest waiting for PostgreSQL and Redis on the same machine. One process
per core plus one keeps both cores busy while a process waits; a few threads per
process overlap those waits without the memory of more processes."""

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
