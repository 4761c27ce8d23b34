"""Sessions kept in the database and read from Redis.

Every page reads the session; from Redis that costs a fraction of a database query, and
the database stays the record (a session survives Redis being emptied). Django's
`cached_db` engine, with one change: a session stays in the cache for at most
CACHED_SECONDS. Logging out deletes the session from both, but a delete the cache missed
(Redis unreachable at that moment, `chatanime_site.cache`) would otherwise leave the
session usable from the cache for as long as it would have lived: now for at most a few
minutes.

Only with a shared cache (Redis): a per-process memory cache would keep a session
alive in one process after another logged it out (`settings.base`).
"""

from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore

from .auth_backends import SUPERSEDED

CACHED_SECONDS = 300


class SessionStore(cached_db.SessionStore):
    def load(self):
        data = self._cache.get(self.cache_key)
        if data is None:
            stored = self._get_session_from_db()
            if stored is None:
                return {}
            data = self.decode(stored.session_data)
            self._cache.set(
                self.cache_key,
                data,
                self._cached_for(self.get_expiry_age(expiry=stored.expire_date)),
            )
        return read_as_current_backend(data)

    def save(self, must_create=False):
        DatabaseSessionStore.save(self, must_create)
        self._cache.set(self.cache_key, self._session, self._cached_for(self.get_expiry_age()))

    @staticmethod
    def _cached_for(expiry_age: int) -> int:
        return min(expiry_age, CACHED_SECONDS)


def read_as_current_backend(data: dict) -> dict:
    """A session started under Django's or allauth's own backend stays signed in: it is
    read as naming the site's version of it (`auth_backends`). Used by both of the site's
    session engines (this one and `database_sessions`)."""
    backend = data.get(BACKEND_SESSION_KEY)
    if backend in SUPERSEDED:
        data[BACKEND_SESSION_KEY] = SUPERSEDED[backend]
    return data
