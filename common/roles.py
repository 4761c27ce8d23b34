"""The people who use the platform, as Django groups and flags, the same in every app.

- admin: `is_staff` or superuser (Django admin, answer collection, everything below);
- study manager: member of the `study managers` group, or an admin (screening, annotators,
  assignment, study dashboards, the audit trail);
- researcher: member of the `researchers` group, or a study manager (results, exports, API);
- annotator: any other signed-in account, once screened and approved.
"""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied

RESEARCHERS_GROUP = "researchers"
STUDY_MANAGERS_GROUP = "study managers"


def _in_group(user, name: str) -> bool:
    # The navigation asks about roles several times per page: the groups are read once
    # per request (the user object lives as long as the request).
    names = getattr(user, "_role_groups", None)
    if names is None:
        names = user._role_groups = frozenset(user.groups.values_list("name", flat=True))
    return name in names


def is_admin(user) -> bool:
    return bool(user.is_authenticated and (user.is_staff or user.is_superuser))


def is_study_manager(user) -> bool:
    if not user.is_authenticated:
        return False
    return is_admin(user) or _in_group(user, STUDY_MANAGERS_GROUP)


def is_researcher(user) -> bool:
    if not user.is_authenticated:
        return False
    return is_study_manager(user) or _in_group(user, RESEARCHERS_GROUP)


def role_required(check):
    """A view decorator: anonymous visitors are sent to log in, signed-in people without
    the role get 403."""

    def decorator(view):
        @login_required
        @wraps(view)
        def guarded(request, *args, **kwargs):
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return guarded

    return decorator


study_manager_required = role_required(is_study_manager)
researcher_required = role_required(is_researcher)
admin_required = role_required(is_admin)


def shown_name(user) -> str:
    """How the site names a signed-in person ("Signed in as …"): by the email they signed
    up with, not the user name allauth made up from it, which they never chose."""
    return user.email or user.get_username()
