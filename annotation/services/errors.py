class AnnotationError(Exception):
    """A request the rules refuse. `code` is stable for tests and clients; the message is
    translated for the annotator."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)
