"""Settings shared by every environment.

All configuration comes from environment variables (their table is in
docs/operations/configuration.md). Only the embedded defaults for a local run live here;
production.py refuses to start without the secrets it needs.
"""

from pathlib import Path

import environ
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

SECRET_KEY = env("DJANGO_SECRET_KEY", default="insecure-local-only-key")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # intcomma: token counts and other large counts on staff pages, grouped by locale.
    "django.contrib.humanize",
    "django_htmx",
    "django_filters",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "allauth",
    "allauth.account",
    "dialogues",
    "annotation",
    "collection",
    "writing",
    "panels",
    "judges",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "chatanime_site.middleware.ChosenLanguageMiddleware",
    "chatanime_site.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

# Only our own vendored files run or style a page: no inline script or style, no CDN,
# no framing. Chart.js draws on canvases and sets their size through the DOM, which a
# policy on style attributes in HTML does not cover.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"

ROOT_URLCONF = "chatanime_site.urls"
WSGI_APPLICATION = "chatanime_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "annotation.context_processors.roles",
            ],
        },
    },
]

# PostgreSQL: parameters travel apart from the statement, and a statement a connection
# has run PREPARE_THRESHOLD times is kept prepared on the server (psycopg's automatic
# preparation), so the annotator loop's statements, the same few on every request, are
# parsed and planned once per connection instead of once per request. Measured with
# bench/load.py: PostgreSQL's CPU per judgment 6.7-7.2 ms -> 4.9-5.3 ms, judgments/s
# +15-20 % at 10 and 50 annotators. A connection lives CONN_MAX_AGE seconds, so a
# migration that changes a table is seen by every process within a minute (a running
# server's prepared `SELECT *` on a changed table fails until then: restart it after
# migrating, as the deployment does). Not 0 (prepare everything at once): Django's schema
# editor sends a few statements of several commands, which the server cannot prepare.
POSTGRESQL_OPTIONS = {
    "server_side_binding": True,
    "prepare_threshold": env.int("DATABASE_PREPARE_THRESHOLD", default=5),
}
if POSTGRESQL_OPTIONS["prepare_threshold"] < 1:
    raise ImproperlyConfigured(
        "DATABASE_PREPARE_THRESHOLD must be at least 1: migrations send statements of"
        " several commands, which PostgreSQL cannot prepare."
    )


def database_from(named: dict) -> dict:
    """The database a URL names (`env.db`), set up for its engine; options the URL gives
    (`?sslmode=require`) are kept. Used here and by the production settings."""
    options = named.setdefault("OPTIONS", {})
    if named["ENGINE"] == "django.db.backends.sqlite3":
        # Several writers (web requests, the in-process tasks) share one file: wait for
        # the lock instead of failing at once.
        # WAL lets pages read while a submission writes; "normal" sync is still crash-safe
        # in WAL mode and saves an fsync per commit. SQLite remains the embedded default
        # for a demo or a small crowd on one machine: production means PostgreSQL.
        options.update(
            {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            }
        )
    else:
        named["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)
        named["CONN_HEALTH_CHECKS"] = True
        options.update(POSTGRESQL_OPTIONS)
    return named


# SQLite is the embedded default so that `make run` needs no other service.
DATABASES = {
    "default": database_from(
        env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
    ),
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's and allauth's, reading the logged-in user by a written statement.
AUTHENTICATION_BACKENDS = [
    "chatanime_site.auth_backends.ModelBackend",
    "chatanime_site.auth_backends.AccountBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_REDIRECT_URL = "home"
LOGIN_URL = "account_login"

# Annotators are Chinese anime fans: Simplified Chinese first, English beside it.
LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", _("Simplified Chinese")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
FORMAT_MODULE_PATH = ["chatanime_site.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=str(BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Uploaded and generated files: export files prepared by workers (never served as static
# files; the download view checks who asks). Web and workers must share this directory.
MEDIA_ROOT = env.path("DJANGO_MEDIA_ROOT", default=BASE_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Redis is optional locally: without REDIS_URL, Celery tasks run in-process
# (CELERY_TASK_ALWAYS_EAGER) and the cache is process-local memory.
REDIS_URL = env("REDIS_URL", default="")
# Short socket timeouts: when Redis is down, a page that uses the cache or enqueues a
# task gives up at once and carries on (ratings live in the database) instead of
# keeping the annotator waiting.
REDIS_CACHE_OPTIONS = {"socket_connect_timeout": 1, "socket_timeout": 2}
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "chatanime_site.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": REDIS_CACHE_OPTIONS,
        }
    }
    # Sessions read from Redis, kept in the database (chatanime_site.sessions).
    SESSION_ENGINE = "chatanime_site.sessions"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    SESSION_ENGINE = "chatanime_site.database_sessions"  # sessions in the database

CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
# Without a broker, results refreshes and long work go to background threads of the web
# process (common.background), not inside the request. Formerly *_RESULTS_REFRESH_*.
CHATANIME_TASKS_IN_BACKGROUND = env.bool(
    "CHATANIME_TASKS_IN_BACKGROUND",
    default=env.bool("CHATANIME_RESULTS_REFRESH_IN_BACKGROUND", default=True),
)
# ... and at most this often (seconds): results of the embedded default lag by as much.
CHATANIME_IN_PROCESS_REFRESH_INTERVAL = env.int("CHATANIME_IN_PROCESS_REFRESH_INTERVAL", default=30)
# A worker's results refreshes of one study are spaced by at least this many times the
# last recompute's duration (annotation.services.refreshes): a worker spends at most
# about 1 / (this + 1) of its time on a large study, whose results lag by about this many
# recomputes and one. Below 1 a worker would recompute without pause.
CHATANIME_RESULTS_REFRESH_SPACING = env.float("CHATANIME_RESULTS_REFRESH_SPACING", default=2.0)
# ... and by this many while the machine serving annotators is saturated (its load over
# the last minute at least its number of cores): annotators wait for the same cores, so
# results then come later instead of slowing every annotator's next item.
CHATANIME_RESULTS_REFRESH_SPACING_BUSY = env.float(
    "CHATANIME_RESULTS_REFRESH_SPACING_BUSY", default=6.0
)
if CHATANIME_RESULTS_REFRESH_SPACING < 1:
    raise ImproperlyConfigured(
        "CHATANIME_RESULTS_REFRESH_SPACING must be at least 1: below it a worker would"
        " recompute a large study's results without pause."
    )
if CHATANIME_RESULTS_REFRESH_SPACING_BUSY < CHATANIME_RESULTS_REFRESH_SPACING:
    raise ImproperlyConfigured(
        "CHATANIME_RESULTS_REFRESH_SPACING_BUSY must be at least"
        " CHATANIME_RESULTS_REFRESH_SPACING: a saturated machine would recompute results"
        " more often than one with room."
    )
# Acknowledge after the task ran, so a worker killed mid-task gets its work redelivered;
# every task is idempotent for that reason.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis hands an unacknowledged task to another worker once this many seconds have passed
# since its delivery: it must exceed the longest recompute, or a running recompute is
# started a second time (harmless, the tasks are idempotent, but wasted).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=60 * 60),
    "socket_connect_timeout": 1,
}
# Every task gets a time limit, so a stuck recompute (a lock never released, a runaway
# query) frees its worker instead of holding it for ever. At the soft limit the task gets
# SoftTimeLimitExceeded and can record the failure (an export job shows it); the hard
# limit kills the process a minute later. A full recompute of 1.3 million ratings takes
# seconds; tasks that may run longer (export files) set their own limits. Both stay below
# the visibility timeout, or Redis would hand a task still running to a second worker.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=10 * 60)
CELERY_TASK_TIME_LIMIT = CELERY_TASK_SOFT_TIME_LIMIT + 60
# Enqueueing from a web request fails fast when the broker is down; the beat schedule
# catches up later.
CELERY_BROKER_CONNECTION_TIMEOUT = 1
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {
        "task": "annotation.tasks.record_worker_heartbeat",
        "schedule": crontab(minute="*"),
    },
    "leases-expire": {
        "task": "annotation.tasks.leases_expire",
        "schedule": crontab(minute="*/5"),
    },
    "open-studies-refresh": {
        "task": "annotation.tasks.open_studies_refresh",
        "schedule": crontab(minute="*/5"),
    },
    "export-jobs-tidy": {
        "task": "annotation.tasks.export_jobs_tidy",
        "schedule": crontab(minute="*/10"),
    },
    "collection-runs-catch-up": {
        "task": "collection.tasks.collection_runs_catch_up",
        "schedule": crontab(minute="*/5"),
    },
    # Judge figures beside the humans go stale as human judgments arrive.
    "judge-figures-catch-up": {
        "task": "judges.tasks.judge_figures_catch_up",
        "schedule": crontab(minute="*/10"),
    },
    "writing-followups-catch-up": {
        "task": "writing.tasks.followups_catch_up",
        "schedule": crontab(minute="*/2"),
    },
    # Every minute: a panel participant past their deadline is timed out, and their
    # leases freed, within about a minute even if they never ask for another item.
    "panel-participants-time-out": {
        "task": "panels.tasks.participants_time_out",
        "schedule": crontab(minute="*"),
    },
}

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "annotation.api.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PAGINATION_CLASS": "annotation.api.pagination.Pages",
    "PAGE_SIZE": 100,
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env("API_THROTTLE_ANON", default="60/hour"),
        "user": env("API_THROTTLE_USER", default="5000/hour"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ChatAnime annotation API",
    "DESCRIPTION": "Studies, items, judgments and derived results of ChatAnime evaluations.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema describes endpoints, not data; the endpoints guard the data.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # Swagger UI from the installed sidecar package: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# The importer refuses answers longer than this; the published answers stay under 200.
CHATANIME_MAX_TEXT_LENGTH = env.int("CHATANIME_MAX_TEXT_LENGTH", default=4000)
# Bootstrap resamples behind the agreement and Bradley-Terry intervals of the results.
CHATANIME_BOOTSTRAP_DRAWS = env.int("CHATANIME_BOOTSTRAP_DRAWS", default=2000)
# The seed every bootstrap of the results starts from (each figure family offsets it), so
# that a recompute of the same judgments gives the same intervals.
CHATANIME_BOOTSTRAP_SEED = env.int("CHATANIME_BOOTSTRAP_SEED", default=20240601)
# Minimum information for an interval: an estimate from fewer judgments or annotators
# is shown without one ("not enough data").
CHATANIME_MIN_JUDGMENTS = env.int("CHATANIME_MIN_JUDGMENTS", default=10)
CHATANIME_MIN_ANNOTATORS = env.int("CHATANIME_MIN_ANNOTATORS", default=5)
# Prepared export files are deleted this many days after they were written.
CHATANIME_EXPORT_KEEP_DAYS = env.int("CHATANIME_EXPORT_KEEP_DAYS", default=7)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("DJANGO_LOG_LEVEL", default="INFO")},
}

# Calls to model endpoints (collection app): attempts per call on transient errors, and
# the exponential backoff between them (Retry-After is honoured up to the maximum).
COLLECTION_RETRY_ATTEMPTS = env.int("COLLECTION_RETRY_ATTEMPTS", default=6)
COLLECTION_RETRY_BASE_SECONDS = env.float("COLLECTION_RETRY_BASE_SECONDS", default=1.0)
COLLECTION_RETRY_MAX_SECONDS = env.float("COLLECTION_RETRY_MAX_SECONDS", default=60.0)
# A judge's reply that is not a complete verdict is asked again this many times in all,
# then recorded as a failure (transient HTTP errors are retried by the collection client).
JUDGE_REPLY_ATTEMPTS = env.int("JUDGE_REPLY_ATTEMPTS", default=3)

# Accounts, email and the site's address; Prolific's webhook secret and API (panels app):
# read from the environment like the rest.
from .accounts import *  # noqa: E402, F403
from .prolific import *  # noqa: E402, F403
