from common.errors import Refusal


class AnnotationError(Refusal):
    """A rating, screening or staff request the rules refuse; nothing was changed."""
