"""Reads of what is rated that several apps' pages need."""

from django.utils.translation import gettext

from .models import Scenario

# The name the platform gives the human fans' source when it creates it; stored as data,
# shown in the page's language.
HUMAN_FANS = "Human fans"


def source_shown_name(display_name: str) -> str:
    """A source's name on a page: the human fans' default name is the platform's own words
    and is translated; a name staff gave a source, or a model's slug, is shown as it is."""
    return gettext("Human fans") if display_name == HUMAN_FANS else display_name


def scenario_numbers_held() -> list[int]:
    """The numbers of the scenarios in the database (the demo data holds 8 of the 60)."""
    return list(Scenario.objects.order_by("number").values_list("number", flat=True))
