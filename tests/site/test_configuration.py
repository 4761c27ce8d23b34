"""The environment-driven configuration: production fails loudly, local runs need nothing."""

import os
import subprocess
import sys

import pytest

from tests.fixtures.services import REPO
from tests.helpers import PRODUCTION_ENV, run_manage


def test_production_refuses_to_start_without_its_secret_key():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}

    result = run_manage("check", env=env)

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_production_refuses_to_start_without_a_database_url():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DATABASE_URL"}

    result = run_manage("check", env=env)

    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def test_production_settings_pass_the_deployment_checklist():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert result.returncode == 0, result.stdout + result.stderr


def test_production_static_files_collect_with_hashed_names(tmp_path):
    # The production storage rewrites every reference inside CSS and JS files to hashed
    # names and fails on a reference to a file that is not there (a vendored library's
    # source map, say), which would break the image build.
    result = run_manage(
        "collectstatic", "--noinput", env={**PRODUCTION_ENV, "DJANGO_STATIC_ROOT": str(tmp_path)}
    )

    assert result.returncode == 0, result.stderr
    manifest = (tmp_path / "staticfiles.json").read_text()
    assert "vendor/htmx-2.0.11/htmx.min.js" in manifest
    assert "vendor/chartjs-4.6.1/chart.umd.min.js" in manifest


def test_find_python_fails_clearly_below_3_12(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 11\n")
    fake.chmod(0o755)

    result = subprocess.run(
        ["/bin/sh", str(REPO / "scripts" / "find-python")],
        env={"PATH": str(tmp_path), "PYENV_ROOT": str(tmp_path / "none"), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
    )

    assert result.returncode == 1
    assert "Python 3.12 or newer is required" in result.stderr


def test_find_python_picks_a_python_of_at_least_3_12():
    result = subprocess.run(
        ["/bin/sh", str(REPO / "scripts" / "find-python")], capture_output=True, text=True
    )

    assert result.returncode == 0
    version = subprocess.run(
        [result.stdout.strip(), "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"],
        capture_output=True,
        text=True,
    )
    assert version.stdout.strip() == "True"


def test_every_task_has_a_soft_and_a_hard_time_limit_below_the_visibility_timeout():
    from django.conf import settings

    import annotation.tasks  # noqa: F401  (registers the tasks)
    from chatanime_site.celery import app

    tasks = [task for name, task in app.tasks.items() if name.startswith("annotation.")]
    visibility_timeout = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]

    assert tasks
    for task in tasks:
        # What the worker applies: the task's own limits, else the configured defaults.
        soft = task.soft_time_limit or app.conf.task_soft_time_limit
        hard = task.time_limit or app.conf.task_time_limit
        assert soft and hard, task.name
        assert soft < hard < visibility_timeout, task.name


def test_production_uses_the_resilient_redis_cache_and_a_real_broker():
    result = run_manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.CACHES['default']['BACKEND'], s.CACHES['default']['LOCATION'], "
        "s.CELERY_BROKER_URL, s.CELERY_TASK_ALWAYS_EAGER, s.SESSION_ENGINE)",
        env=PRODUCTION_ENV,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "chatanime_site.cache.ResilientRedisCache",
        PRODUCTION_ENV["REDIS_URL"],
        PRODUCTION_ENV["REDIS_URL"],
        "False",
        "chatanime_site.sessions",
    ]


def test_without_redis_sessions_stay_in_the_database_alone():
    # A per-process memory cache would keep a session alive in one process after
    # another logged it out.
    result = run_manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; print(s.SESSION_ENGINE)",
        env={"DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local"},
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["chatanime_site.database_sessions"]


def test_production_refuses_to_start_without_a_redis_url():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "REDIS_URL"}

    result = run_manage("check", env=env)

    assert result.returncode != 0
    assert "REDIS_URL" in result.stderr


def test_production_refuses_a_prepare_threshold_migrations_cannot_run_with():
    result = run_manage("check", env={**PRODUCTION_ENV, "DATABASE_PREPARE_THRESHOLD": "0"})

    assert result.returncode != 0
    assert "DATABASE_PREPARE_THRESHOLD must be at least 1" in result.stderr


def test_production_keeps_postgresql_statements_prepared_and_the_urls_options():
    result = run_manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'])",
        env={
            **PRODUCTION_ENV,
            "DATABASE_URL": PRODUCTION_ENV["DATABASE_URL"] + "?sslmode=require",
            "DATABASE_PREPARE_THRESHOLD": "3",
        },
    )

    assert result.returncode == 0, result.stderr
    assert "'server_side_binding': True" in result.stdout
    assert "'prepare_threshold': 3" in result.stdout
    assert "'sslmode': 'require'" in result.stdout


def test_the_embedded_sqlite_lets_pages_read_while_a_submission_writes(tmp_path):
    """`make run` with several annotators: WAL (readers never wait for the writer),
    immediate write transactions (no deadlock on upgrading a read lock) and a busy
    timeout instead of "database is locked"."""
    code = (
        "import django; django.setup(); from django.db import connection; "
        "cursor = connection.cursor(); "
        "print(cursor.execute('PRAGMA journal_mode').fetchone()[0], "
        "cursor.execute('PRAGMA busy_timeout').fetchone()[0], "
        "connection.settings_dict['OPTIONS']['transaction_mode'])"
    )
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={
            **clean,
            "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.local",
            "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()

    assert out == ["wal", "20000", "IMMEDIATE"]


def test_a_results_refresh_spacing_below_one_is_refused_at_start_up():
    result = run_manage("check", env={**PRODUCTION_ENV, "CHATANIME_RESULTS_REFRESH_SPACING": "0.5"})

    assert result.returncode != 0
    assert "CHATANIME_RESULTS_REFRESH_SPACING must be at least 1" in result.stderr


def test_a_busy_results_refresh_spacing_below_the_usual_one_is_refused_at_start_up():
    result = run_manage(
        "check",
        env={
            **PRODUCTION_ENV,
            "CHATANIME_RESULTS_REFRESH_SPACING": "4",
            "CHATANIME_RESULTS_REFRESH_SPACING_BUSY": "3",
        },
    )

    assert result.returncode != 0
    assert "CHATANIME_RESULTS_REFRESH_SPACING_BUSY must be at least" in result.stderr


@pytest.mark.parametrize(
    ("host", "link"), [("127.0.0.1", "http://127.0.0.1:8765"), ("0.0.0.0", "http://127.0.0.1:8765")]
)
def test_make_run_points_links_at_its_own_address(host, link):
    """The panel join link and emails' links name the server `make run` starts, not
    port 8000 whatever PORT says (a participant sent there would find nothing)."""
    recipe = subprocess.run(
        ["make", "-n", "run", f"HOST={host}", "PORT=8765"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"CHATANIME_SITE_URL=${{CHATANIME_SITE_URL:-{link}}} scripts/serve {host} 8765" in recipe


@pytest.mark.parametrize(
    ("data", "database"),
    [
        (None, "db.sqlite3"),
        ("./dialogues/demo_data/", "db.sqlite3"),
        ("../shared/data/chatanime", "db-chatanime.sqlite3"),
    ],
)
def test_make_run_keeps_a_database_for_each_data_set(data, database):
    """The demo and the published data number their scenarios alike with other texts, so
    `make run DATA=…` after a first `make run` must not import into the demo's database
    (the import would be refused on every scenario)."""
    recipe = subprocess.run(
        ["make", "-n", "run", *([f"DATA={data}"] if data else [])],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    steps = [line for line in recipe.splitlines() if "manage.py" in line or "scripts/serve" in line]
    assert len(steps) == 4
    expected = f"DATABASE_URL=${{DATABASE_URL:-sqlite:///{REPO}/{database}}}"
    assert all(line.startswith(expected) for line in steps), steps
