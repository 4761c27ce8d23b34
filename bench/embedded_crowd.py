"""Does the embedded default (`make run`: SQLite, tasks in-process, runserver) hold a small
crowd? Sets up what `make run` sets up (the demo data, seed_demo's studies), adds
annotators approved for every character, serves with `manage.py runserver` as
scripts/serve does, and lets them rate at once in a closed loop (submit, receive the
next item, submit again). Prints p50/p95 of submit + next, errors, and judgments saved
against successful answers.

    .venv/bin/python bench/embedded_crowd.py [--annotators 10] [--judgments 20]
"""

import argparse
import http.client
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import report
from bench.load import csrf_secret, free_port

REPO = Path(__file__).resolve().parents[1]

PREPARE = """
import json, django
django.setup()
from django.test import Client
from annotation import demo, services
from annotation.metric_definitions import METRICS
users = [
    services.account_ensure(email=f"crowd{{n}}@example.com", password="crowd-password")
    for n in range({annotators})
]
demo.demo_prepare(annotators=users)
sessions = []
for user in users:
    client = Client()
    client.force_login(user)
    sessions.append(client.cookies["sessionid"].value)
print(json.dumps({{"sessions": sessions, "metrics": [
    (m["slug"], bool(m.get("for_diversity"))) for m in METRICS]}}))
"""

FORM_ACTION = re.compile(r'action="/annotate/([A-Za-z0-9_-]+)/"')
ITEM_ADDRESS = re.compile(r"/annotate/([A-Za-z0-9_-]+)/$")


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Annotator(threading.Thread):
    def __init__(self, port, session, form, judgments):
        super().__init__(daemon=True)
        self.port, self.form, self.judgments = port, form, judgments
        self.csrf = csrf_secret()
        self.cookie = f"sessionid={session}; csrftoken={self.csrf}"
        self.latencies, self.errors, self.ok = [], [], 0

    def _request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(
                method, path, body=body, headers={"Cookie": self.cookie, **(headers or {})}
            )
            response = connection.getresponse()
            return response.status, response.getheader("Location") or "", response.read()
        finally:
            connection.close()

    def _token(self):
        status, location, _body = self._request("GET", "/annotate/")
        match = ITEM_ADDRESS.search(location)
        return match.group(1) if status == 302 and match else None

    def run(self):
        token = self._token()
        while token and self.ok < self.judgments:
            started = time.perf_counter()
            status, _location, body = self._request(
                "POST",
                f"/annotate/{token}/",
                body=self.form,
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "X-CSRFToken": self.csrf,
                    "HX-Request": "true",
                },
            )
            self.latencies.append(1000 * (time.perf_counter() - started))
            match = FORM_ACTION.search(body.decode("utf-8", "replace"))
            if status == 200 and match:
                self.ok += 1
                token = match.group(1)
            elif status == 200 and b'data-testid="next-failed"' not in body:
                self.ok += 1  # saved; nothing more to rate
                return
            else:
                self.errors.append(status)
                token = self._token()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=10)
    parser.add_argument("--judgments", type=int, default=20, help="per annotator")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        database = f"sqlite:///{tmp}/db.sqlite3"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
            "DATABASE_URL": database,
            "DJANGO_LOG_LEVEL": "WARNING",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
        }
        env.pop("REDIS_URL", None)

        def manage(*command):
            subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
            )

        manage("migrate", "--noinput")
        manage("import_chatanime", str(REPO / "dialogues" / "demo_data"))
        manage("seed_demo")
        prepared = json.loads(
            subprocess.run(
                [sys.executable, "-c", PREPARE.format(annotators=args.annotators)],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        fields = []
        for slug, for_diversity in prepared["metrics"]:
            names = ["set"] if for_diversity else ["a", "b"]
            fields += [f"{name}-{slug}={2 + len(fields) % 3}" for name in names]
        form = "&".join([*fields, "preference=tie", "guess=unsure"])

        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health/", timeout=2)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("runserver did not come up") from None
                    time.sleep(0.5)
            crowd = [
                Annotator(port, session, form, args.judgments) for session in prepared["sessions"]
            ]
            started = time.perf_counter()
            for annotator in crowd:
                annotator.start()
            for annotator in crowd:
                annotator.join()
            elapsed = time.perf_counter() - started
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        saved = int(
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import django; django.setup(); from annotation.models import Judgment; "
                    "print(Judgment.objects.filter(annotator__email__startswith='crowd').count())",
                ],
                cwd=REPO,
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        )

    latencies = [ms for a in crowd for ms in a.latencies]
    errors = [status for a in crowd for status in a.errors]
    ok = sum(a.ok for a in crowd)
    p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
    print(
        f"make run (SQLite, tasks in-process, runserver), {args.annotators} annotators at once, "
        f"closed loop"
    )
    print(f"submit + next: p50 {p50:.0f} ms, p95 {p95:.0f} ms over {len(latencies)} submissions")
    print(f"errors: {len(errors)} {sorted(set(errors))}; successful answers {ok}, saved {saved}")
    print(f"judgments/s: {ok / elapsed:.1f}")
    report(
        f"embedded default: {args.annotators} annotators",
        "make run: SQLite, in-process tasks",
        f"{p50:.0f}/{p95:.0f} ms p50/p95 submit + next, {len(errors)} errors, {ok} ok / {saved} saved",
    )


if __name__ == "__main__":
    main()
