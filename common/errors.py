"""The refusal every app's services raise: a request the rules refuse, and nothing was
changed. Each app names its own subclass (`AnnotationError`, `CollectionError`,
`WritingError`) so that a caller catches its app's refusals; the shape is this one."""


class Refusal(Exception):
    """`code` is stable for tests and clients; `message` is shown to the person, translated
    where it is for annotators, writers or staff."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)
