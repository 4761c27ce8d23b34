"""Figures another app keeps about a study, recomputed when `aggregate` recomputes the
study's results, without `annotation` importing that app: the LLM judges' figures beside
the humans. The app registers a recompute when it starts (`AppConfig.ready`); `aggregate`
calls each and prints what they return under their names in its `--json` output."""

from collections.abc import Callable

# recompute(study) -> a JSON-able part, or None when the app has nothing about the study.
Recompute = Callable[[object], object]

_registered: dict[str, Recompute] = {}


def study_part_add(name: str, recompute: Recompute) -> None:
    """Recompute `name` with every study's results; adding it again replaces it."""
    _registered[name] = recompute


def study_parts_recompute(study) -> dict:
    """Every registered part of `study`, recomputed now; parts with nothing are left out."""
    parts = {}
    for name, recompute in _registered.items():
        part = recompute(study)
        if part is not None:
            parts[name] = part
    return parts
