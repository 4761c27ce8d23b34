"""Writing a source's answers in the ChatAnime file format, which `import_chatanime` reads.

Only `dialogues.Answer`s are written, that is, accepted answers. The format holds whole
dialogues, so a dialogue is written when both of its rounds are there.
"""

import json
import os
import tempfile
from pathlib import Path

from dialogues.models import Answer, Source


def source_dialogues(source: Source) -> tuple[dict[str, list[dict]], int]:
    """The file's content, and how many dialogues were left out for lacking a round."""
    cells: dict[tuple[str, int], dict] = {}
    answers = (
        Answer.objects.filter(source=source)
        .select_related("character", "scenario")
        .order_by("character_id", "scenario__number", "round")
    )
    for answer in answers:
        cell = cells.setdefault(
            (answer.character.key, answer.scenario.number),
            {"dialog_id": answer.scenario.number},
        )
        cell[f"question_r{answer.round}"] = answer.question
        cell[f"answer_r{answer.round}"] = answer.text
    content: dict[str, list[dict]] = {}
    incomplete = 0
    for (character_key, _), dialogue in cells.items():
        if len(dialogue) != 5:
            incomplete += 1
            continue
        content.setdefault(character_key, []).append(
            {
                key: dialogue[key]
                for key in ("dialog_id", "question_r1", "answer_r1", "question_r2", "answer_r2")
            }
        )
    return content, incomplete


def source_export(*, source: Source, directory: Path) -> tuple[Path | None, int, int]:
    """Write DIR/SLUG.json atomically; returns (path, dialogues written, left out). With
    no whole dialogue, writes nothing (an earlier file stays) and returns no path."""
    content, incomplete = source_dialogues(source)
    if not content:
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
    return path, sum(len(d) for d in content.values()), incomplete
