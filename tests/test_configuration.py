"""The environment-driven configuration: production fails loudly, local runs need nothing."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.production",
    "DJANGO_SECRET_KEY": "a-long-random-production-secret-" + "x7Q2p9Lm" * 6,
    "DJANGO_ALLOWED_HOSTS": "chatanime.example.org",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/chatanime",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def manage(*args, env):
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_refuses_to_start_without_its_secret_key():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_production_refuses_to_start_without_a_database_url():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DATABASE_URL"}

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "DATABASE_URL" in result.stderr


def test_production_settings_pass_the_deployment_checklist():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)

    assert result.returncode == 0, result.stdout + result.stderr


def test_production_static_files_collect_with_hashed_names(tmp_path):
    # The production storage rewrites every reference inside CSS and JS files to hashed
    # names and fails on a reference to a file that is not there (a vendored library's
    # source map, say), which would break the image build.
    result = manage(
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
