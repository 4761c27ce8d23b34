"""Where the rating page sends a panel participant (registered in `apps.PanelsConfig`
through `common.destinations`, so that annotation never imports panels)."""

from django.urls import reverse

from .models import ParticipantState
from .selectors import batch_of


def work_stop(user) -> str | None:
    """Before a new item: a participant whose batch is over or whose time is up goes to
    their own end page, which settles it; one who owes an attention check, to the check."""
    batch = batch_of(user)
    if batch is None:
        return None
    if batch.state != ParticipantState.STARTED or batch.late:
        return reverse("panel-done", args=[batch.slug])
    if batch.check_due:
        return reverse("panel-check", args=[batch.slug])
    return None


def work_done(user) -> str | None:
    """Nothing left to rate: a participant's end is their own page (the code, the check
    still owed, or how many items are still owed)."""
    batch = batch_of(user)
    return None if batch is None else reverse("panel-done", args=[batch.slug])


def work_setup(user) -> str | None:
    """Not yet ready to rate (consent or characters still to give): a participant's way in
    is their panel's start page, never the site's own screening; once their batch is over,
    their end page."""
    batch = batch_of(user)
    if batch is None:
        return None
    if batch.state != ParticipantState.STARTED or batch.late:
        return reverse("panel-done", args=[batch.slug])
    return reverse("panel-start", args=[batch.slug])
