"""Sessions in the database alone, where there is no Redis (`make run`, `make test-fast`):
Django's engine, reading a session that names a superseded backend as naming the site's
(`sessions.read_as_current_backend`)."""

from django.contrib.sessions.backends import db

from .sessions import read_as_current_backend


class SessionStore(db.SessionStore):
    def load(self):
        return read_as_current_backend(super().load())
