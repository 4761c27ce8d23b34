"""Calls to Prolific's API on staff's behalf, as the panel's services make them: a refusal
or a silence of Prolific is a PanelError, and without a token staff are told how to make
the same change without one."""

from django.utils.translation import gettext as _

from .. import prolific
from .errors import PanelError


def prolific_client() -> prolific.ProlificClient:
    return prolific.ProlificClient()


def prolific_call(call, *args, by_hand: str = "", **kwargs):
    """Call Prolific; its refusal, or its silence, is ours: nothing is changed here.
    Without a token, staff are told how to make the same change without one (`by_hand`:
    what fits the action; by default, on Prolific's own pages)."""
    try:
        return call(*args, **kwargs)
    except prolific.ProlificTokenError as error:
        raise PanelError(
            "prolific",
            " ".join(
                [
                    str(error),
                    str(_("Nothing was changed.")),
                    by_hand
                    or str(
                        _(
                            "Do it on Prolific's own study page, or set the token where "
                            "the server runs to do it from here."
                        )
                    ),
                ]
            ),
        ) from None
    except prolific.ProlificError as error:
        raise PanelError("prolific", str(error)) from None
