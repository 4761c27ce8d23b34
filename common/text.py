"""Free text that people type (comments, reasons, notes, samples), as it is stored; and
figures as pages show them."""

from django.utils.formats import number_format


def plain_text(value: object, limit: int | None = None) -> str:
    """Without NUL characters (PostgreSQL text cannot hold them, and they carry nothing),
    without surrounding space, and at most `limit` characters long."""
    text = str(value or "").replace("\x00", "").strip()
    return text[:limit] if limit is not None else text


def rounded_number(value: float, places: int) -> str:
    """`value` rounded to `places` decimals in the page's number format. Django's
    `number_format` cuts a float's digits instead of rounding them (0.5288 reads "0.52",
    an interval's upper bound 0.629 "0.62"), so figures would differ from the commands'
    (`judge_report`) and read lower than they are."""
    # A figure just below zero rounds to -0.0, which would read "-0.00".
    return number_format(round(float(value), places) or 0.0, places)
