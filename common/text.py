"""Free text that people type (comments, reasons, notes, samples), as it is stored."""


def plain_text(value: object, limit: int | None = None) -> str:
    """Without NUL characters (PostgreSQL text cannot hold them, and they carry nothing),
    without surrounding space, and at most `limit` characters long."""
    text = str(value or "").replace("\x00", "").strip()
    return text[:limit] if limit is not None else text
