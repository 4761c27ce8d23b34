"""What several test modules do the same way: fill the rating form, build and submit
judgments, check that a response is blind, and bring an applicant through screening.
Test modules import from here (and from factories and fixtures), never from each other."""

import os
import subprocess
import sys

from annotation import services
from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import ItemKind
from dialogues.models import Source
from tests.fixtures.services import REPO

# The password of accounts that log in through a form (browser tests, the manager).
PASSWORD = "a-Long-pass-phrase-42"


# The rating form and submissions ----------------------------------------------------------


def complete_form(value="4", preference="a"):
    """The rating form as a browser posts it, every scale answered."""
    form = {f"{p}-{slug}": value for p in "ab" for slug in PAIR_METRIC_SLUGS}
    form["preference"] = preference
    return form


def full_ratings(value=4, positions=("a", "b")):
    return {(p, slug): value for p in positions for slug in PAIR_METRIC_SLUGS}


def pair_submission(**overrides):
    fields = {"ratings": full_ratings(), "preference": "a"}
    fields.update(overrides)
    return services.Submission(**fields)


def ratings(a_values, b_values):
    """Ratings of a pair cycling through `a_values` and `b_values` over the metrics."""
    out = {}
    for i, slug in enumerate(PAIR_METRIC_SLUGS):
        out[("a", slug)] = a_values[i % len(a_values)]
        out[("b", slug)] = b_values[i % len(b_values)]
    return out


def submit(user, lease, a_values=(3, 4), b_values=(2, 5)):
    return services.judgment_submit(
        user=user,
        token=lease.token,
        submission=services.Submission(ratings=ratings(a_values, b_values), preference="a"),
    )


def submit_item(user, assignment, value=4, preference="a"):
    """Every scale of a pair or a diversity set at `value`."""
    if assignment.item.kind == ItemKind.PAIR:
        submission = services.Submission(
            ratings=full_ratings(value), preference=preference, human_guess="unsure"
        )
    else:
        submission = services.Submission(ratings={("set", "diversity"): value})
    return services.judgment_submit(user=user, token=assignment.token, submission=submission)


# Blinding ---------------------------------------------------------------------------------


def source_markers():
    markers = set()
    for source in Source.objects.all():
        markers.add(source.slug.lower())
        markers.add(source.display_name.lower())
    return markers


def assert_blind(response):
    body = response.content.decode().lower()
    headers = " ".join(f"{k}: {v}" for k, v in response.headers.items()).lower()
    for marker in source_markers():
        assert marker not in body, f"{marker!r} appears in an annotator's page"
        assert marker not in headers, f"{marker!r} appears in an annotator's response headers"


# Settings and commands in a process of their own -----------------------------------------

PRODUCTION_ENV = {
    "DJANGO_SETTINGS_MODULE": "chatanime_site.settings.production",
    "DJANGO_SECRET_KEY": "a-long-random-production-secret-" + "x7Q2p9Lm" * 6,
    "DJANGO_ALLOWED_HOSTS": "chatanime.example.org",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/chatanime",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def run_manage(*args, env) -> subprocess.CompletedProcess:
    """`manage.py ARGS` with only the given Django, database and Redis variables."""
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


def spy_on(monkeypatch, module, name: str) -> list[tuple]:
    """Replace `module.name` with a wrapper that records each call's positional
    arguments and then calls the real function; returns the list of recorded calls."""
    calls: list[tuple] = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls
