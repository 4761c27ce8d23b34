"""Reads of what is rated that several apps' pages need."""

from .models import Scenario


def scenario_numbers_held() -> list[int]:
    """The numbers of the scenarios in the database (the demo data holds 8 of the 60)."""
    return list(Scenario.objects.order_by("number").values_list("number", flat=True))
