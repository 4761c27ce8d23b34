"""Writes of what is rated. Sources and accepted answers are created here by every app
(import, collection, writing), so that a source's kind is decided in one place and never
silently changes (fans' answers counted as a model's would invert every human-vs-LLM
figure), and an answer keeps who wrote it. The importer writes answers in bulk with the
same fields (`importer._upsert_answers`)."""

from django.db import transaction

from .models import Answer, Character, Scenario, Source, SourceKind
from .selectors import HUMAN_FANS

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
    return HUMAN_FANS if slug == HUMAN_SOURCE_SLUG else slug


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


def answer_put(
    *,
    character: Character,
    scenario: Scenario,
    source: Source,
    round: int,
    question: str,
    text: str,
    author=None,
    author_label: str = "",
) -> Answer:
    """The source's answer to this round of this scenario, as one character, created or
    replaced: a cell holds one answer (`one_answer_per_cell`). `author` is the fan who
    wrote it here, `author_label` their pseudonym, which exports carry."""
    answer, _ = Answer.objects.update_or_create(
        character=character,
        scenario=scenario,
        source=source,
        round=round,
        defaults={
            "question": question,
            "text": text,
            "author": author,
            "author_label": author_label,
        },
    )
    return answer


BATCH_SIZE = 2000


def answers_put_many(wanted: dict[tuple, tuple[str, str, str]], *, sources) -> tuple[int, int]:
    """`answer_put` for many answers at once, as an import writes them: `wanted` maps
    (character id, scenario id, source id, round) to (question, text, author's pseudonym).
    Answers of `sources` are read once, new ones created and changed ones updated in
    batches; returns (created, updated). An empty pseudonym leaves a known one in place."""
    existing = {
        (a.character_id, a.scenario_id, a.source_id, a.round): a
        for a in Answer.objects.filter(source_id__in=list(sources)).only(
            "id",
            "character_id",
            "scenario_id",
            "source_id",
            "round",
            "question",
            "text",
            "author_label",
        )
    }
    to_create, to_update = [], []
    for (character_id, scenario_id, source_id, round_), (question, text, author) in wanted.items():
        answer = existing.get((character_id, scenario_id, source_id, round_))
        if answer is None:
            to_create.append(
                Answer(
                    character_id=character_id,
                    scenario_id=scenario_id,
                    source_id=source_id,
                    round=round_,
                    question=question,
                    text=text,
                    author_label=author,
                )
            )
        elif (answer.question, answer.text) != (question, text) or (
            author and answer.author_label != author
        ):
            answer.question, answer.text = question, text
            answer.author_label = author or answer.author_label
            to_update.append(answer)
    Answer.objects.bulk_create(to_create, batch_size=BATCH_SIZE)
    Answer.objects.bulk_update(
        to_update, ["question", "text", "author_label"], batch_size=BATCH_SIZE
    )
    return len(to_create), len(to_update)
