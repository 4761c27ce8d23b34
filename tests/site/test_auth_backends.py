"""The site's authentication backends read the logged-in user by a written statement
(`chatanime_site.auth_backends`): the same user as the ORM's, and nobody who may not
sign in."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend as DjangoModelBackend
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chatanime_site.auth_backends import AccountBackend, ModelBackend

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol():
    user = get_user_model().objects.create_user("carol", "carol@example.com", "pw-carol-123")
    user.first_name, user.is_staff = "Carol", True
    user.save()
    return user


@pytest.mark.parametrize("backend", [ModelBackend(), AccountBackend()])
def test_the_user_read_is_the_orms(carol, backend):
    expected = DjangoModelBackend().get_user(carol.pk)

    with CaptureQueriesContext(connection) as queries:
        user = backend.get_user(carol.pk)

    assert len(queries) == 1
    assert user == expected
    fields = [field.attname for field in get_user_model()._meta.concrete_fields]
    assert [getattr(user, f) for f in fields] == [getattr(expected, f) for f in fields]
    assert user.get_session_auth_hash() == expected.get_session_auth_hash()


@pytest.mark.parametrize("backend", [ModelBackend(), AccountBackend()])
def test_no_user_for_an_unknown_id_or_an_inactive_account(carol, backend):
    assert backend.get_user(carol.pk + 1000) is None
    carol.is_active = False
    carol.save()
    assert backend.get_user(carol.pk) is None


def test_signing_in_through_the_form_names_the_sites_backend(client, carol):
    from allauth.account.models import EmailAddress

    EmailAddress.objects.create(user=carol, email=carol.email, verified=True, primary=True)

    client.post("/accounts/login/", {"login": carol.email, "password": "pw-carol-123"})

    assert client.session["_auth_user_backend"] == "chatanime_site.auth_backends.AccountBackend"
    assert client.get("/").context["user"] == carol
