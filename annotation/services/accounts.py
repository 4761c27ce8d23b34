"""Accounts and the workers' heartbeat."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from common.roles import RESEARCHERS_GROUP, STUDY_MANAGERS_GROUP

from ..models import WorkerHeartbeat


def worker_heartbeat_record(*, hostname: str) -> WorkerHeartbeat:
    heartbeat, _created = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
    return heartbeat


@transaction.atomic
def account_ensure(
    *,
    email: str,
    password: str,
    staff: bool = False,
    superuser: bool = False,
    researcher: bool = False,
    study_manager: bool = False,
    password_hash: str = "",
):
    """Create or refresh a ready-to-use account whose email address is verified.
    `password_hash` (from `make_password(password)`) spares the slow hashing when many
    accounts get the same password."""
    from allauth.account.models import EmailAddress

    user_model = get_user_model()
    user = user_model.objects.filter(email__iexact=email).first()
    if user is None:
        user = user_model(username=email.split("@")[0], email=email)
    user.is_staff = staff or superuser
    user.is_superuser = superuser
    if password_hash:
        user.password = password_hash
    else:
        user.set_password(password)
    user.save()
    EmailAddress.objects.update_or_create(
        user=user, email=email, defaults={"verified": True, "primary": True}
    )
    for wanted, name in ((researcher, RESEARCHERS_GROUP), (study_manager, STUDY_MANAGERS_GROUP)):
        if wanted:
            group, _created = Group.objects.get_or_create(name=name)
            user.groups.add(group)
    return user
