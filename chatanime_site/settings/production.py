"""Production settings: everything secret or host-specific must come from the environment.

A missing DJANGO_SECRET_KEY, DATABASE_URL, REDIS_URL or DJANGO_ALLOWED_HOSTS stops the
process at start-up with ImproperlyConfigured instead of running on a default.
"""

from .base import *  # noqa: F403
from .base import database_from, env

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
DATABASES = {"default": database_from(env.db("DATABASE_URL"))}
# Read again only to fail loudly when missing: base.py already built the Redis cache,
# the broker URL and real (not in-process) task execution from the same variable.
REDIS_URL = env("REDIS_URL")

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

ACCOUNT_EMAIL_VERIFICATION = "mandatory"
MAILERS = {
    "default": {
        "BACKEND": env(
            "DJANGO_EMAIL_BACKEND", default="django.core.mail.backends.smtp.EmailBackend"
        ),
        "OPTIONS": {
            "host": env("DJANGO_EMAIL_HOST", default="localhost"),
            "port": env.int("DJANGO_EMAIL_PORT", default=25),
            "username": env("DJANGO_EMAIL_USER", default=None),
            "password": env("DJANGO_EMAIL_PASSWORD", default=None),
            "use_tls": env.bool("DJANGO_EMAIL_USE_TLS", default=False),
        },
    }
}
