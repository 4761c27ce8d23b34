"""Choosing what to collect: characters, scenario numbers and rounds as staff and the
command give them, checked against the database."""

import re

from django.utils.translation import gettext as _

from dialogues.models import ROUNDS, SCENARIO_COUNT, Character, Scenario

from .errors import CollectionError


def parse_scenario_numbers(text: str) -> list[int]:
    """`1-60`, `3`, `1-5,9,12-14` -> sorted scenario numbers."""
    numbers: set[int] = set()
    for part in (text or "").split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise CollectionError(
                "bad_scenarios", f"scenarios must look like 1-60 or 1,5,9-12; got {text!r}"
            )
        first, last = int(match[1]), int(match[2] or match[1])
        if first > last or first < 1 or last > SCENARIO_COUNT:
            raise CollectionError(
                "bad_scenarios",
                f"scenario range {part} is outside 1-{SCENARIO_COUNT} or runs backwards",
            )
        numbers.update(range(first, last + 1))
    return sorted(numbers)


def numbers_as_ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 16, 17, 31] -> `1-3,16-17,31`: what `parse_scenario_numbers` reads."""
    runs: list[list[int]] = []
    for number in sorted(set(numbers)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def parse_rounds(text: str) -> list[int]:
    try:
        rounds = sorted({int(part) for part in (text or "").split(",")})
    except ValueError:
        rounds = []
    if not rounds or any(r not in ROUNDS for r in rounds):
        raise CollectionError("bad_rounds", f"rounds must be 1, 2 or 1,2; got {text!r}")
    return rounds


def characters_named(names: list[str] | None) -> list[Character]:
    """Characters by key (《作品》的角色), Chinese name or English name; all when None."""
    if not names:
        characters = list(Character.objects.order_by("id"))
        if not characters:
            raise CollectionError(
                "no_characters", "there are no characters yet; import a ChatAnime file first"
            )
        return characters
    found, unknown = [], []
    for name in names:
        name = name.strip()
        match = (
            Character.objects.filter(key=name).first()
            or Character.objects.filter(name_zh=name).first()
            or Character.objects.filter(name_en__iexact=name).exclude(name_en="").first()
        )
        (found if match else unknown).append(match or name)
    if unknown:
        raise CollectionError("unknown_character", f"unknown character(s): {', '.join(unknown)}")
    return list(dict.fromkeys(found))


def scenarios_numbered(numbers: list[int] | None) -> list[Scenario]:
    """Scenarios by number; all the database holds when None (like `characters_named`)."""
    if numbers is None:
        scenarios = list(Scenario.objects.order_by("number"))
        if not scenarios:
            raise CollectionError(
                "no_scenarios", "there are no scenarios yet; import a ChatAnime file first"
            )
        return scenarios
    scenarios = list(Scenario.objects.filter(number__in=numbers).order_by("number"))
    missing = sorted(set(numbers) - {s.number for s in scenarios})
    if missing:
        raise CollectionError(
            "unknown_scenario",
            _(
                "Scenarios %(missing)s are not in the database (it holds %(held)s); import "
                "them first or choose among those."
            )
            % {
                "missing": ", ".join(map(str, missing)),
                "held": numbers_as_ranges(
                    list(Scenario.objects.order_by("number").values_list("number", flat=True))
                ),
            },
        )
    return scenarios
