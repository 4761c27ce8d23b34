"""The site's authentication backends: Django's and allauth's, with the logged-in user
read by one written statement (`annotation.sql`). Every request of a logged-in user loads
them; built by the ORM, that read cost about a third of a millisecond of CPU, some 7 % of
an annotator's submission and next item. Sessions started under Django's and allauth's own
classes are read as naming these (`chatanime_site.sessions`)."""

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth import backends, get_user_model
from django.db import connection

from annotation import sql


def user_by_id(user_id):
    """The user with this primary key, or None."""
    User = get_user_model()
    table, key = (connection.ops.quote_name(n) for n in (User._meta.db_table, User._meta.pk.column))
    row = sql.first_row(
        f"SELECT {sql.columns(User, 'u')} FROM {table} u WHERE u.{key} = %s", [user_id]
    )
    return None if row is None else sql.instance(User, row)


class _UserReadBySql:
    def get_user(self, user_id):
        user = user_by_id(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None


class ModelBackend(_UserReadBySql, backends.ModelBackend):
    pass


class AccountBackend(_UserReadBySql, AuthenticationBackend):
    pass


# What sessions started before these backends name, and what they are read as.
SUPERSEDED = {
    "django.contrib.auth.backends.ModelBackend": f"{__name__}.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend": f"{__name__}.AccountBackend",
}
