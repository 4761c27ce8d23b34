"""Settings for the test suite: fast hashing, in-memory email, no debug toolbar noise.

The database comes from DATABASE_URL like everywhere else: SQLite by default for fast
unit tests, PostgreSQL when CI sets it.
"""

from .base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Unit tests run tasks in-process; integration tests start a real worker and switch
# eagerness off themselves.
CELERY_TASK_ALWAYS_EAGER = True
# Refreshes and runs go inline, so a test sees what its request caused at once; the
# background threads of `make run` have their own tests.
CHATANIME_TASKS_IN_BACKGROUND = False
# Static files come straight from the app and project folders; no collectstatic step.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
