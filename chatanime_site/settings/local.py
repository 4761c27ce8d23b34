"""Settings for `make run`: debug on, embedded SQLite unless DATABASE_URL is set."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)

# Static files come straight from the app and project folders; no collectstatic step.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
