import io

import pytest
from django.core.management import call_command


@pytest.fixture
def judge_key(monkeypatch):
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-judge-secret")


@pytest.fixture(autouse=True)
def _quick_retries(settings):
    settings.COLLECTION_RETRY_BASE_SECONDS = 0.01
    settings.COLLECTION_RETRY_MAX_SECONDS = 0.05
    settings.COLLECTION_RETRY_ATTEMPTS = 3


def judge(server, study, *extra, model="judge-7b"):
    """Run `judge_study` against `server`; returns what it printed."""
    out = io.StringIO()
    call_command(
        "judge_study",
        "--study", study.slug,
        "--base-url", server.url,
        "--model", model,
        "--api-key-env", "TEST_JUDGE_KEY",
        *extra,
        stdout=out,
    )  # fmt: skip
    return out.getvalue()
