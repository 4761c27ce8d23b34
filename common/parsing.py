"""Reading whole numbers from form fields and query strings.

str.isdigit() also accepts "²" and other digits that int() refuses, so a check with it
alone lets such input through to a 500; these accept ASCII digits only, and no sign: an id
or a count is never negative."""

from collections.abc import Iterable


def whole_number(raw: object) -> int | None:
    """The number written in `raw`, or None if it is not a plain whole number."""
    raw = str(raw)
    return int(raw) if raw.isascii() and raw.isdigit() else None


def whole_numbers(values: Iterable[object]) -> list[int]:
    """The whole numbers among `values`, in order; anything else is left out."""
    return [n for n in map(whole_number, values) if n is not None]
