"""Amounts of money as the panels pay them: kept in minor units (pence, cents, fen), shown
with the currency's sign and two decimals."""

SIGNS = {"GBP": "£", "USD": "$", "EUR": "€", "CNY": "¥"}


def money(minor_units: int | None, currency: str) -> str:
    """`250, "GBP"` → "£2.50"; "" for no amount."""
    if minor_units is None:
        return ""
    sign = SIGNS.get(currency, currency + " ")
    return f"{sign}{minor_units // 100}.{minor_units % 100:02d}"
