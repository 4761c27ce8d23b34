"""The refusal every write of the collection app raises: nothing was changed."""

from common.errors import Refusal


class CollectionError(Refusal):
    """A collection request the rules refuse; nothing was changed."""
