"""Settings of accounts (allauth), email and the address links to the site are built on,
imported by base.py."""

import environ

# base.py has read the .env file into the environment before importing this module.
env = environ.Env()

# Accounts: sign-in by email; annotators never need a user name.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = env("ACCOUNT_EMAIL_VERIFICATION", default="optional")
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[ChatAnime] "  # not the host (also account/email/base_message)
ACCOUNT_USER_DISPLAY = "common.roles.shown_name"
# Also the admin's log-in: /admin/login/ sends staff to this form (chatanime_site/urls.py).
ACCOUNT_RATE_LIMITS = {"login_failed": "5/5m/ip,5/5m/key"}
# Locally, verification and reset emails are printed by the server.
MAILERS = {
    "default": {
        "BACKEND": env(
            "DJANGO_EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend"
        )
    }
}
DEFAULT_FROM_EMAIL = env("DJANGO_DEFAULT_FROM_EMAIL", default="ChatAnime <noreply@localhost>")
# Where links to the site point (emails, the panel join link). Unset (or empty), a link
# made in answer to a request points where that request reached the site
# (`common.site.site_url`); only links made with no request fall back to the default.
SITE_URL_SET = bool(env.str("CHATANIME_SITE_URL", default=""))
SITE_URL = env.str("CHATANIME_SITE_URL", default="") or "http://127.0.0.1:8000"
