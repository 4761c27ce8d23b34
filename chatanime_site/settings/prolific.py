"""Settings of Prolific (the panels app), imported by base.py.

The webhook's signing secret (Prolific's workspace secret, from POST /api/v1/hooks/secrets/)
and the API token are read from the environment only, never stored in the database or
logged. Without a secret the webhook answers 503 to every request, so that Prolific keeps
its events for later.
"""

import environ
from django.core.exceptions import ImproperlyConfigured

# base.py has read the .env file into the environment before importing this module.
env = environ.Env()
PROLIFIC_WEBHOOK_SECRET = env("PROLIFIC_WEBHOOK_SECRET", default="")
PROLIFIC_API_URL = env("PROLIFIC_API_URL", default="https://api.prolific.com/api/v1/")
# The token itself, or a file holding it (a Docker or Kubernetes secret); the file is read
# at each call, so a rotated token is used without a restart.
PROLIFIC_API_TOKEN = env("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_TOKEN_FILE = env("PROLIFIC_API_TOKEN_FILE", default="")
if PROLIFIC_API_TOKEN and PROLIFIC_API_TOKEN_FILE:
    raise ImproperlyConfigured(
        "Set PROLIFIC_API_TOKEN or PROLIFIC_API_TOKEN_FILE, not both: which one is used"
        " would be a guess."
    )
# Calls to Prolific's API: attempts per call on 429, 5xx and connection errors, and the
# exponential backoff between them (Retry-After is honoured up to the maximum).
PROLIFIC_API_ATTEMPTS = env.int("PROLIFIC_API_ATTEMPTS", default=4)
PROLIFIC_API_RETRY_BASE_SECONDS = env.float("PROLIFIC_API_RETRY_BASE_SECONDS", default=1.0)
PROLIFIC_API_RETRY_MAX_SECONDS = env.float("PROLIFIC_API_RETRY_MAX_SECONDS", default=30.0)
PROLIFIC_API_TIMEOUT_SECONDS = env.float("PROLIFIC_API_TIMEOUT_SECONDS", default=20.0)

__all__ = [
    "PROLIFIC_API_ATTEMPTS",
    "PROLIFIC_API_RETRY_BASE_SECONDS",
    "PROLIFIC_API_RETRY_MAX_SECONDS",
    "PROLIFIC_API_TIMEOUT_SECONDS",
    "PROLIFIC_API_TOKEN",
    "PROLIFIC_API_TOKEN_FILE",
    "PROLIFIC_API_URL",
    "PROLIFIC_WEBHOOK_SECRET",
]
