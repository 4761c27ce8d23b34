"""Sessions with Redis: read from the cache, kept in the database, and never usable from
the cache for long once the database has let them go (`chatanime_site.sessions`)."""

import time

import pytest
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chatanime_site import database_sessions, sessions

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(settings, client):
    # The engine the site uses with Redis, here over a memory cache whose clock the
    # tests can move.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.SESSION_ENGINE = "chatanime_site.sessions"
    user = get_user_model().objects.create_user("carol", "carol@example.com", "pw-carol-123")
    client.force_login(user)
    return client


def signed_in_on_home(client) -> bool:
    return client.get("/").context["user"].is_authenticated


def test_a_session_is_read_from_the_cache_not_the_database(signed_in):
    with CaptureQueriesContext(connection) as queries:
        assert signed_in_on_home(signed_in)
    assert not [q for q in queries if "django_session" in q["sql"]]


def test_a_session_outlives_an_emptied_cache(signed_in):
    cache.clear()

    assert signed_in_on_home(signed_in)
    assert Session.objects.count() == 1


def test_logging_out_ends_the_session_in_the_cache_and_the_database(signed_in):
    signed_in.post("/accounts/logout/")

    assert not signed_in_on_home(signed_in)
    assert Session.objects.count() == 0


def test_a_session_the_cache_still_holds_ends_within_minutes(signed_in, monkeypatch):
    """A logout whose cache delete was lost (Redis away for that moment) removed the
    session from the database only: the cached copy lapses after CACHED_SECONDS."""
    Session.objects.all().delete()
    assert signed_in_on_home(signed_in)  # the cached copy, for now

    later = time.time() + sessions.CACHED_SECONDS + 1
    monkeypatch.setattr("django.core.cache.backends.locmem.time.time", lambda: later)

    assert not signed_in_on_home(signed_in)


@pytest.mark.parametrize(
    "started_under",
    [
        "django.contrib.auth.backends.ModelBackend",
        "allauth.account.auth_backends.AuthenticationBackend",
    ],
)
@pytest.mark.parametrize("emptied_cache", [False, True])
def test_a_session_started_under_a_superseded_backend_stays_signed_in(
    signed_in, started_under, emptied_cache
):
    """Sessions started before the site's backends (`chatanime_site.auth_backends`) name
    Django's or allauth's: their annotators are not logged out by the change."""
    key = signed_in.session.session_key
    store = sessions.SessionStore(key)
    store[BACKEND_SESSION_KEY] = started_under
    store.save()
    if emptied_cache:
        cache.clear()

    assert signed_in_on_home(signed_in)
    assert (
        sessions.SessionStore(key).load()[BACKEND_SESSION_KEY] in settings.AUTHENTICATION_BACKENDS
    )


@pytest.mark.parametrize(
    "started_under",
    [
        "django.contrib.auth.backends.ModelBackend",
        "allauth.account.auth_backends.AuthenticationBackend",
    ],
)
def test_without_redis_too_a_session_of_a_superseded_backend_stays_signed_in(
    settings, client, started_under
):
    settings.SESSION_ENGINE = "chatanime_site.database_sessions"
    user = get_user_model().objects.create_user("dave", "dave@example.com", "pw-dave-123")
    client.force_login(user)
    session = Session.objects.get()
    data = session.get_decoded()
    data[BACKEND_SESSION_KEY] = started_under
    Session.objects.filter(pk=session.pk).update(
        session_data=database_sessions.SessionStore().encode(data)
    )

    assert signed_in_on_home(client)


def test_a_session_naming_an_unknown_backend_is_signed_out(signed_in):
    key = signed_in.session.session_key
    store = sessions.SessionStore(key)
    store[BACKEND_SESSION_KEY] = "somewhere.else.Backend"
    store.save()

    assert not signed_in_on_home(signed_in)
