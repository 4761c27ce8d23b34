"""Writing a source's answers in the ChatAnime file format, which `import_chatanime` reads.

Only `dialogues.Answer`s are written, that is, accepted answers. The format holds whole
dialogues, so a dialogue is written when both of its rounds are there. The file says what
the source is (`_source`: its kind and display name), so that a fans' source imported
elsewhere stays human, and who wrote each dialogue by pseudonym only (`author`).
"""

import json
import os
import tempfile
from pathlib import Path

from annotation.models import AnnotatorProfile
from dialogues.chatanime_format import SOURCE_METADATA_KEY
from dialogues.models import Answer, Source

DIALOGUE_FIELDS = ("dialog_id", "question_r1", "answer_r1", "question_r2", "answer_r2")


def source_dialogues(source: Source) -> tuple[dict, int]:
    """The file's content, and how many dialogues were left out for lacking a round."""
    cells: dict[tuple[str, int], dict] = {}
    answers = (
        Answer.objects.filter(source=source)
        .select_related("character", "scenario")
        .order_by("character_id", "scenario__number", "round")
    )
    pseudonyms = _author_pseudonyms(source)
    for answer in answers:
        cell = cells.setdefault(
            (answer.character.key, answer.scenario.number),
            {"dialog_id": answer.scenario.number},
        )
        cell[f"question_r{answer.round}"] = answer.question
        cell[f"answer_r{answer.round}"] = answer.text
        author = pseudonyms.get(answer.author_id) or answer.author_label
        if author:
            cell["author"] = author
    content: dict = {
        SOURCE_METADATA_KEY: {"kind": source.kind, "display_name": source.display_name}
    }
    incomplete = 0
    for (character_key, _), dialogue in cells.items():
        if not all(key in dialogue for key in DIALOGUE_FIELDS):
            incomplete += 1
            continue
        content.setdefault(character_key, []).append(
            {key: dialogue[key] for key in (*DIALOGUE_FIELDS, "author") if key in dialogue}
        )
    return content, incomplete


def _author_pseudonyms(source: Source) -> dict[int, str]:
    """Writers by the pseudonym research exports know them by: never an email or name."""
    authors = Answer.objects.filter(source=source, author__isnull=False).values("author_id")
    return dict(
        AnnotatorProfile.objects.filter(user_id__in=authors).values_list("user_id", "pseudonym")
    )


def source_export(*, source: Source, directory: Path) -> tuple[Path | None, int, int]:
    """Write DIR/SLUG.json atomically; returns (path, dialogues written, left out). With
    no whole dialogue, writes nothing (an earlier file stays) and returns no path."""
    content, incomplete = source_dialogues(source)
    dialogues = [d for key, d in content.items() if key != SOURCE_METADATA_KEY]
    if not dialogues:
        return None, 0, incomplete
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{source.slug}.json"
    # Write beside the target and rename, so a reader never sees half a file.
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{source.slug}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(content, file, ensure_ascii=False, indent=1)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path, sum(map(len, dialogues)), incomplete
