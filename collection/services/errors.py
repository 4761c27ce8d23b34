"""The refusal every write of the collection app raises: nothing was changed."""


class CollectionError(Exception):
    """A request the rules refuse; nothing was changed. `code` is stable for tests."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)
