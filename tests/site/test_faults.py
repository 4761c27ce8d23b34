"""Faults on real services: the broker goes away, a worker dies half-way, PostgreSQL
restarts, an import is killed. Every server that is stopped here is a private one."""

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psycopg
import pytest
from django.db.models import Count

from annotation.models import Judgment, Rating, Study, StudyResults
from annotation.simulation import simulate_study
from annotation.tasks import open_studies_refresh, study_results_refresh
from chatanime_site.cache import ResilientRedisCache
from dialogues.models import Answer, Character, Scenario, Source
from tests.builders import approved_annotator, lease_pair, make_study
from tests.fixtures.data import DEMO_DATA, write_source
from tests.fixtures.faults import free_port, manage, manage_env, port_open
from tests.fixtures.services import (
    REPO,
    database_url_of_test_database,
    publishing_to,
    running_worker,
    wait_for,
)
from tests.helpers import complete_form

pytestmark = pytest.mark.integration


def new_queue() -> str:
    return f"fault-{os.getpid()}-{time.monotonic_ns()}"


def counted_judgments(study) -> int:
    """What a complete results document counts: judgments that are not gold checks."""
    return Judgment.objects.filter(item__study=study, excluded=False, item__is_gold=False).count()


# Redis stopped while annotators submit ---------------------------------------------------


@pytest.fixture
def redis_cache(private_redis, settings):
    """The cache on the private Redis, as in production; back to memory before that Redis
    is stopped for good."""
    original = settings.CACHES
    settings.CACHES = {
        "default": {
            "BACKEND": "chatanime_site.cache.ResilientRedisCache",
            "LOCATION": private_redis.url,
            "OPTIONS": settings.REDIS_CACHE_OPTIONS,
        }
    }
    yield
    settings.CACHES = original
    ResilientRedisCache._unreachable_until = 0.0


def test_the_cache_keeps_one_redis_client_that_reconnects_after_a_restart(
    private_redis, redis_cache
):
    from django.core.cache import cache

    client = cache._cache.get_client()
    cache.set("greeting", "hello")
    assert cache._cache.get_client() is client

    private_redis.stop()
    assert cache.get("greeting") is None  # carried on without it
    private_redis.start()
    ResilientRedisCache._unreachable_until = 0.0  # past the pause after a failure

    cache.set("greeting", "again")
    assert cache.get("greeting") == "again"
    assert cache._cache.get_client() is client


@pytest.mark.django_db(transaction=True)
def test_people_can_log_in_while_redis_is_down(postgres, private_redis, redis_cache, client):
    """Log-in throttling keeps its counters in the cache; without Redis it lets people
    in (and says so in the log) instead of failing every log-in."""
    fan = approved_annotator("fan@example.com", [])
    private_redis.stop()
    started = time.monotonic()

    response = client.post(
        "/accounts/login/", {"login": "fan@example.com", "password": "pw-for-tests"}
    )

    assert response.status_code == 302, response.content[:500]
    assert client.get("/screening/").wsgi_request.user == fan
    assert time.monotonic() - started < 10
    client.logout()
    wrong = client.post("/accounts/login/", {"login": "fan@example.com", "password": "wrong"})
    assert wrong.status_code == 200  # the form again, with its error: not a server error


@pytest.mark.django_db(transaction=True)
def test_judgments_are_saved_while_redis_is_down_and_results_catch_up_after(
    postgres, private_redis, redis_cache, client, demo_dataset, luffy, caplog
):
    study = make_study(characters=[luffy], rounds=(1,))
    annotators = [approved_annotator(f"fan{i}@example.com", [luffy]) for i in range(3)]
    queue = new_queue()

    with publishing_to(private_redis.url, queue):
        private_redis.stop()
        for annotator in annotators:
            client.force_login(annotator)
            lease = lease_pair(annotator)
            started = time.monotonic()

            response = client.post(
                f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"}
            )

            # The next item is served straight away; nobody waits on the dead broker.
            assert response.status_code == 200, response.content[:500]
            assert time.monotonic() - started < 10
            assert Judgment.objects.filter(assignment=lease).count() == 1
        assert Judgment.objects.filter(item__study=study).count() == 3
        assert any("could not enqueue" in r.getMessage() for r in caplog.records)
        assert not StudyResults.objects.filter(study=study).exists()

        # Redis comes back empty (no persistence); the beat schedule's catch-up task
        # refreshes every open study.
        private_redis.start()
        with running_worker(
            database_url=database_url_of_test_database(),
            redis_url=private_redis.url,
            queues=[queue, "celery"],
        ):
            open_studies_refresh.delay()
            results = wait_for(
                lambda: StudyResults.objects.filter(study=study).first(), timeout=120
            )

    assert results is not None, "the results never caught up"
    assert results.judgments == counted_judgments(study) > 0


# A worker killed half-way through a task --------------------------------------------------


def kill_half_way_then_redeliver(
    *, redis_url, env, marker, pause_in, start, while_dead, finished, what
):
    """Run `start()` (it enqueues one task) on a worker that stops half-way through it
    (tests.fixtures.pausing_worker), kill that worker, call `while_dead()`, then start a
    successor and wait until `finished()` returns something. Returns (that, the
    successor's log). `env` must give a short CELERY_VISIBILITY_TIMEOUT."""
    database_url = database_url_of_test_database()
    queue = new_queue()
    with publishing_to(redis_url, queue):
        with running_worker(
            database_url=database_url,
            redis_url=redis_url,
            queues=[queue, "celery"],
            app="tests.fixtures.pausing_worker",
            env={**env, "CHATANIME_PAUSE_MARKER": str(marker), "CHATANIME_PAUSE_IN": pause_in},
        ) as doomed:
            start()
            assert wait_for(marker.exists, timeout=60), f"the {what} never started"
            assert marker.read_text() == str(doomed.pid)
            doomed.send_signal(signal.SIGKILL)
            doomed.wait(timeout=30)
        killed_at = time.monotonic()
        while_dead()

        # The successor looks for abandoned tasks when it starts; by then the visibility
        # timeout of the abandoned one must have run out.
        wait_for(lambda: time.monotonic() - killed_at > 4, timeout=10)
        with running_worker(
            database_url=database_url, redis_url=redis_url, queues=[queue, "celery"], env=env
        ) as successor:
            found = wait_for(finished, timeout=120)
            successor.send_signal(signal.SIGTERM)
            log = successor.communicate(timeout=30)[0]
    assert found is not None, f"the {what} was not redelivered:\n{log}"
    return found, log


@pytest.mark.django_db(transaction=True)
def test_a_recompute_whose_worker_is_killed_is_redelivered_and_stored_once(
    postgres, private_redis, settings, demo_dataset, luffy, tmp_path
):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    study = make_study(characters=[luffy], rounds=(1,), overlap=2)
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    study.refresh_from_db()
    simulate_study(study=study, annotators=4, seed=5)
    StudyResults.objects.all().delete()  # simulate_study computed them in-process

    def nothing_stored():
        assert not StudyResults.objects.filter(study=study).exists()

    results, log = kill_half_way_then_redeliver(
        redis_url=private_redis.url,
        env={"CELERY_VISIBILITY_TIMEOUT": "3", "CHATANIME_BOOTSTRAP_DRAWS": "20"},
        marker=tmp_path / "recompute-paused",
        pause_in="recompute",
        start=lambda: study_results_refresh.delay(study.pk),
        while_dead=nothing_stored,
        finished=lambda: StudyResults.objects.filter(study=study).first(),
        what="recompute",
    )

    assert "study_results_refresh" in log and "succeeded" in log
    assert StudyResults.objects.filter(study=study).count() == 1
    assert results.judgments == counted_judgments(study) > 0
    expected = dict(
        Rating.objects.filter(
            judgment__item__study=study,
            judgment__item__kind="pair",
            metric__slug="fluency",
            answer__source__slug="human",
        )
        .values_list("metric__slug")
        .annotate(n=Count("pk"))
    )
    assert results.payload["leaderboard"]["human"]["fluency"]["n"] == expected["fluency"]


@pytest.mark.django_db(transaction=True)
def test_an_export_whose_worker_is_killed_is_written_by_another_and_its_debris_removed(
    postgres, private_redis, settings, demo_dataset, luffy, tmp_path
):
    from datetime import timedelta

    from django.utils import timezone

    from annotation import exports, services
    from annotation.models import ExportJob, ExportStatus
    from tests.builders import UserFactory

    media = tmp_path / "media"
    settings.MEDIA_ROOT = media
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    study = make_study(characters=[luffy], rounds=(1,), overlap=2)
    simulate_study(study=study, annotators=4, seed=5)
    requested = []

    def request_export():
        requested.append(
            services.export_job_request(
                study=study, user=UserFactory(email="r@example.com"), kind="csv"
            )
        )

    def half_written():
        job = ExportJob.objects.get(pk=requested[0].pk)
        assert job.status == ExportStatus.RUNNING and not job.file
        partials = list((media / "exports").glob(".*"))
        assert len(partials) == 1  # the half-written file, under its temporary name

    done, _log = kill_half_way_then_redeliver(
        redis_url=private_redis.url,
        env={"CELERY_VISIBILITY_TIMEOUT": "3", "DJANGO_MEDIA_ROOT": str(media)},
        marker=tmp_path / "export-paused",
        pause_in="export",
        start=request_export,
        while_dead=half_written,
        finished=lambda: ExportJob.objects.filter(
            pk=requested[0].pk, status=ExportStatus.DONE
        ).first(),
        what="export",
    )

    expected = b"".join(exports.export_chunks(study, "csv", False))
    assert (media / done.file.name).read_bytes() == expected
    assert done.rows == Rating.objects.filter(judgment__item__study=study).count()
    # Once no running job can own it, the beat's tidy-up removes the debris.
    services.export_jobs_tidy()
    assert len(list((media / "exports").glob(".*"))) == 1
    later = timezone.now() + services.exports.REQUEUE_RUNNING_AFTER + timedelta(minutes=1)
    services.export_jobs_tidy(now=later)
    assert list((media / "exports").glob(".*")) == []
    assert (media / done.file.name).exists()


# PostgreSQL restarted --------------------------------------------------------------------

SETUP_ANNOTATOR = """
from annotation import demo, services
user = services.account_ensure(email="fan@example.com", password="fault-test-pw-42")
demo.demo_prepare(annotators=[user])
"""


class Browser:
    """A cookie-keeping HTTP client that does not follow redirects."""

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    def __init__(self, base):
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), self._NoRedirect
        )

    def csrf(self):
        return next(c.value for c in self.cookies if c.name == "csrftoken")

    def request(self, path, data=None, headers=None):
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self.csrf()}).encode()
        request = urllib.request.Request(
            self.base + path, data=body, headers={"Referer": self.base + path, **(headers or {})}
        )
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, dict(response.headers), response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read().decode()


def filled_form(html: str) -> dict:
    """Every radio group of the rating form answered with its first choice."""
    form = {}
    for name, value in re.findall(r'<input type="radio" name="([^"]+)" value="([^"]+)"', html):
        form.setdefault(name, value)
    return form


@pytest.fixture
def site_on_private_postgres(private_postgres, tmp_path):
    private_postgres.psql("CREATE DATABASE chatanime")
    env = manage_env(private_postgres.url("chatanime"))
    manage("migrate", "--noinput", env=env)
    manage("import_chatanime", str(DEMO_DATA), env=env)
    manage("shell", "-c", SETUP_ANNOTATOR, env=env)
    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "chatanime_site.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--timeout",
            "120",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        if not wait_for(lambda: port_open(port) or server.poll() is not None, timeout=60):
            pytest.fail("gunicorn did not start")
        if server.poll() is not None:
            pytest.fail(f"gunicorn exited:\n{log_path.read_text()}")
        yield private_postgres, f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def judgments_in(postgres) -> int:
    return int(postgres.psql("SELECT count(*) FROM annotation_judgment", database="chatanime"))


def test_the_site_recovers_from_a_postgresql_restart_and_a_retried_rating_counts_once(
    site_on_private_postgres,
):
    postgres, base = site_on_private_postgres
    browser = Browser(base)
    browser.request("/accounts/login/")
    status, headers, _ = browser.request(
        "/accounts/login/", {"login": "fan@example.com", "password": "fault-test-pw-42"}
    )
    assert status == 302, "log-in failed"
    status, headers, _ = browser.request("/annotate/")
    assert status == 302
    item_path = urllib.parse.urlsplit(headers["Location"]).path
    assert re.fullmatch(r"/annotate/[\w-]+/", item_path)

    # A restart between two requests: the next request simply works.
    postgres.stop("fast")
    postgres.start()
    status, _, page = browser.request(item_path)
    assert status == 200
    form = filled_form(page)
    # A new annotator's first item is a diversity set: one rating for the whole set.
    assert list(form) == ["set-diversity"]

    # A submission while the database is down: a clear, retryable 503 in Chinese.
    postgres.stop("fast")
    status, headers, page = browser.request(item_path, form)
    assert status == 503
    assert headers.get("Retry-After")
    assert '<html lang="zh-hans">' in page
    assert "数据库" in page and "Traceback" not in page
    status, headers, fragment = browser.request(item_path, form, headers={"HX-Request": "true"})
    assert status == 503
    assert headers.get("HX-Retarget") == "#work" and 'role="alert"' in fragment

    # Back up: sending the same form again records exactly one judgment, and sending it
    # once more (a double click, a replay) adds nothing.
    postgres.start()
    assert judgments_in(postgres) == 0
    status, _, _ = browser.request(item_path, form)
    assert status == 302
    assert judgments_in(postgres) == 1
    status, _, _ = browser.request(item_path, form)
    assert status in (200, 302)
    assert judgments_in(postgres) == 1


# An import killed half-way ----------------------------------------------------------------


def big_answer_set(directory: Path, sources=6, characters=20) -> None:
    """Sources, characters and scenarios that the demo set does not have, agreeing with
    its scenario questions where they overlap."""
    demo = json.loads((DEMO_DATA / "human.json").read_text(encoding="utf-8"))
    known = {d["dialog_id"]: d["question_r1"] for ds in demo.values() for d in ds}
    for s in range(sources):
        content = {
            f"《测试作品{c}》的角色{c}": [
                {
                    "dialog_id": n,
                    "question_r1": known.get(n, f"场景{n}：今天有点难过。"),
                    "answer_r1": f"来源{s}的第一轮回答 {c}-{n}",
                    "question_r2": f"来源{s}的第二轮提问 {c}-{n}",
                    "answer_r2": f"来源{s}的第二轮回答 {c}-{n}",
                }
                for n in range(1, 61)
            ]
            for c in range(characters)
        }
        write_source(directory, f"bulk-model-{s}", content)


def table_snapshot():
    return {
        model.__name__: sorted(model.objects.values_list("pk", flat=True))
        for model in (Source, Character, Scenario, Answer)
    }


@pytest.mark.django_db(transaction=True)
def test_an_import_killed_half_way_leaves_the_database_as_it_was(postgres, demo_dataset, tmp_path):
    big_answer_set(tmp_path)
    before = table_snapshot()
    texts_before = dict(Answer.objects.values_list("pk", "text"))
    database_url = database_url_of_test_database()
    conninfo = database_url.replace("postgres://", "postgresql://")
    env = manage_env(database_url)

    # Holding a lock on the answers table stops the import after it has written the new
    # scenarios, characters and sources, inside its transaction: a kill there is a kill
    # in the middle of the writes, every time.
    with psycopg.connect(conninfo) as blocker, psycopg.connect(conninfo, autocommit=True) as spy:
        blocker.execute("LOCK TABLE dialogues_answer IN ACCESS EXCLUSIVE MODE")
        importer = subprocess.Popen(
            [sys.executable, "manage.py", "import_chatanime", str(tmp_path)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

        def writing_and_waiting():
            return spy.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_xid IS NOT NULL AND wait_event_type = 'Lock' AND pid <> %s",
                [blocker.info.backend_pid],
            ).fetchone()

        try:
            found = wait_for(lambda: writing_and_waiting() or importer.poll() is not None, 120)
            assert found and importer.poll() is None, "the import never wrote anything"
            backend_pid = writing_and_waiting()[0]
        finally:
            importer.send_signal(signal.SIGKILL)
            importer.wait(timeout=30)
            blocker.rollback()
        # The server notices the dead client and rolls its transaction back.
        assert wait_for(
            lambda: (
                not spy.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE pid = %s", [backend_pid]
                ).fetchone()
            ),
            timeout=60,
        )

    assert table_snapshot() == before
    assert dict(Answer.objects.values_list("pk", "text")) == texts_before
    # Nothing is left half-done: the same import runs to the end afterwards.
    assert "Import complete" in manage("import_chatanime", str(tmp_path), env=env)
    assert Answer.objects.count() == len(before["Answer"]) + 6 * 20 * 60 * 2
