"""The refusal every write of the judges app raises: nothing was changed."""

from common.errors import Refusal


class JudgeError(Refusal):
    """A judge request the rules refuse; nothing was changed."""
