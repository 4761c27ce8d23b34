"""Writes of what is rated. Sources are created here by every app (import, collection,
writing), so that a source's kind is decided in one place and never silently changes:
fans' answers counted as a model's would invert every human-vs-LLM figure."""

from django.db import transaction

from .models import Source, SourceKind

HUMAN_SOURCE_SLUG = "human"


class SourceKindConflict(Exception):
    def __init__(self, *, slug: str, held: str, stated: str):
        self.slug, self.held, self.stated = slug, held, stated
        super().__init__(
            f"source {slug!r} is held here as {kind_label(held)}, "
            f"but this says {kind_label(stated)}"
        )


def kind_label(kind: str) -> str:
    return "human fans' answers" if kind == SourceKind.HUMAN else "a model's answers"


def source_display_name(slug: str) -> str:
    return "Human fans" if slug == HUMAN_SOURCE_SLUG else slug


def source_get_or_create(*, slug: str, kind: str, display_name: str = "") -> tuple[Source, bool]:
    """The source with this slug, created as `kind` if it is new; an existing source of
    the other kind raises SourceKindConflict and nothing is written."""
    if kind not in SourceKind.values:
        raise ValueError(f"unknown source kind {kind!r}")
    with transaction.atomic():
        source, created = Source.objects.get_or_create(
            slug=slug,
            defaults={"kind": kind, "display_name": display_name or source_display_name(slug)},
        )
        if source.kind != kind:
            raise SourceKindConflict(slug=slug, held=source.kind, stated=kind)
    return source, created
