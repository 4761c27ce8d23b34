"""The refusal every write of fan writing raises: nothing was changed."""

from common.errors import Refusal


class WritingError(Refusal):
    """A writing or review request the rules refuse; nothing was changed."""
