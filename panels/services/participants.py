"""Participants arriving from a panel's link: created once per panel id, resumed after."""

import secrets
from datetime import timedelta
from urllib.parse import quote

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext as _

from annotation.models import StudyStatus
from annotation.services import profile_get_or_create

from ..models import PanelStudy, Participant
from ..selectors import PANEL_ACCOUNT_PREFIX, places_taken
from .configuration import TOKEN
from .errors import PanelError

# Salt of the keyed hash: a hash made for another purpose never matches these.
PID_SALT = "panels.Participant.pid"


def pid_hash(pid: str) -> str:
    """The keyed hash a returning participant is found by (HMAC-SHA256 under SECRET_KEY)."""
    return salted_hmac(PID_SALT, pid, algorithm="sha256").hexdigest()


def _checked(value, *, code: str, message: str, optional=False) -> str:
    if optional and value == "":
        return ""
    if not isinstance(value, str) or not TOKEN.fullmatch(value):
        raise PanelError(code, message)
    return value


@transaction.atomic
def participant_join(
    *, panel_study: PanelStudy, pid, session_id="", prolific_study_id=""
) -> Participant:
    """The participant the panel sent with this id: the one who came before with it, or a
    new pseudonymous account (no email, no password) whose consent is still to be given.
    A study that is paused, closed or full refuses newcomers, never someone resuming."""
    pid = _checked(
        pid,
        code="bad_id",
        message=_("The link from the panel carries no valid participant id."),
    )
    extra = _("The link from the panel carries a malformed session or study id.")
    session_id = _checked(session_id, code="bad_parameters", message=extra, optional=True)
    prolific_study_id = _checked(
        prolific_study_id, code="bad_parameters", message=extra, optional=True
    )
    hashed = pid_hash(pid)
    found = _existing(panel_study, hashed)
    if found is not None:
        return found
    # Newcomers to one study queue here, so that the last place goes to one of them only
    # and a second tab with the same id finds the first tab's participant. Only the panel's
    # row, and not against its key: the study's row (joined here) is what every judgment
    # and lease of the study checks its key against, and the first arrivals rate while
    # the rest are still coming in.
    panel = (
        PanelStudy.objects.select_for_update(of=("self",), no_key=True)
        .select_related("study")
        .get(pk=panel_study.pk)
    )
    found = _existing(panel, hashed)
    if found is not None:
        return found
    if not panel.is_open:
        raise PanelError("paused", _("This study is not taking participants at the moment."))
    if panel.study.status != StudyStatus.OPEN:
        raise PanelError("closed", _("This study is not open."))
    if panel.places and places_taken(panel) >= panel.places:
        raise PanelError("full", _("This study has all the participants it needs."))
    try:
        with transaction.atomic():
            return _create(panel, pid, hashed, session_id, prolific_study_id)
    except IntegrityError:
        # Another request created this id's participant between our read and write (a
        # database without row locks): theirs is the one. Read once, never loop.
        found = _existing(panel, hashed)
        if found is None:
            raise
        return found


def _existing(panel_study: PanelStudy, hashed: str) -> Participant | None:
    return (
        Participant.objects.select_related("user", "panel_study__study")
        .filter(panel_study=panel_study, pid_hash=hashed)
        .first()
    )


def _create(panel, pid, hashed, session_id, prolific_study_id) -> Participant:
    user = get_user_model().objects.create_user(
        username=f"{PANEL_ACCOUNT_PREFIX}{secrets.token_hex(8)}", email="", password=None
    )
    profile_get_or_create(user=user)
    now = timezone.now()
    return Participant.objects.create(
        panel_study=panel,
        pid_hash=hashed,
        pid=pid,
        session_id=session_id,
        prolific_study_id=prolific_study_id,
        user=user,
        started_at=now,
        deadline=now + timedelta(minutes=panel.minutes),
    )


def completion_link(participant: Participant) -> str:
    """Where the participant goes back to the panel with their code; "" before they have
    one. Both values are escaped for any place in a URL."""
    if not participant.code:
        return ""
    return participant.panel_study.completion_url_template.format(
        code=quote(participant.code, safe=""), pid=quote(participant.pid, safe="")
    )
