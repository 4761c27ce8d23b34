"""The refusal every write of the panels app raises: nothing was changed."""

from common.errors import Refusal


class PanelError(Refusal):
    """A panel request or setting the rules refuse; nothing was changed. For a setting,
    `code` is the setting's name, so that a command or form can point at its option."""
