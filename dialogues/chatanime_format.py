"""The ChatAnime JSON format: one file per source (its name without `.json` is the source
slug), mapping character keys such as `《海贼王》的蒙奇·D·路飞` to dialogues
`{dialog_id, question_r1, answer_r1, question_r2, answer_r2}`.

Files written by `export_answers` also say what the source is, under the key `_source`
(`{"kind": "human" | "llm", "display_name": ...}`), and who wrote each dialogue (`author`,
the writer's pseudonym). The published files say neither: there `human.json` is the fans'
and every other file a model's.

Reading is pure: `read_source_file` turns bytes into records or a list of problems that
name the file, character and dialog id; it never raises on bad content.
"""

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .models import SCENARIO_COUNT, Answer, Character, Source, SourceKind
from .services import HUMAN_SOURCE_SLUG

TEXT_FIELDS = ("question_r1", "answer_r1", "question_r2", "answer_r2")
CHARACTER_KEY = re.compile(r"^《(?P<work>[^》]+)》的(?P<name>.+)$")
SOURCE_METADATA_KEY = "_source"
SOURCE_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
KEY_LENGTH = Character._meta.get_field("key").max_length
NAME_LENGTH = min(
    Character._meta.get_field("work_zh").max_length,
    Character._meta.get_field("name_zh").max_length,
)
SLUG_LENGTH = Source._meta.get_field("slug").max_length
DISPLAY_NAME_LENGTH = Source._meta.get_field("display_name").max_length
AUTHOR_LENGTH = Answer._meta.get_field("author_label").max_length


@dataclass(frozen=True)
class Problem:
    file: str
    message: str
    character: str | None = None
    dialog_id: object = None
    field: str | None = None

    def __str__(self):
        where = [self.file]
        if self.character is not None:
            where.append(f"character {self.character}")
        if self.dialog_id is not None:
            where.append(f"dialog_id {self.dialog_id}")
        if self.field is not None:
            where.append(f"field {self.field}")
        return f"{': '.join(where)}: {self.message}"


@dataclass(frozen=True)
class Dialogue:
    character_key: str
    dialog_id: int
    question_r1: str
    answer_r1: str
    question_r2: str
    answer_r2: str
    author: str = ""


@dataclass
class SourceFile:
    slug: str
    file: str
    dialogues: list[Dialogue] = field(default_factory=list)
    # As the file's `_source` states it; None where the file does not say.
    kind: str | None = None
    display_name: str = ""

    @property
    def kind_or_default(self) -> str:
        if self.kind is not None:
            return self.kind
        return SourceKind.HUMAN if self.slug == HUMAN_SOURCE_SLUG else SourceKind.LLM


def normalize_question(text: str) -> str:
    """The published files write the same scenario with `~` in some sources and `～` in
    others; compare questions with such width variants folded together."""
    return unicodedata.normalize("NFKC", text).strip()


def unstorable(text: str) -> str | None:
    """Why the database cannot store `text` as it is, or None. JSON can carry NUL
    characters and unpaired surrogates; PostgreSQL text and UTF-8 cannot."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"contains an unpaired surrogate at character {error.start}"
    return None


def split_character_key(key: str) -> tuple[str, str] | None:
    match = CHARACTER_KEY.match(key.strip())
    if not match:
        return None
    return match["work"].strip(), match["name"].strip()


def read_source_file(name: str, raw: bytes, max_length: int) -> tuple[SourceFile, list[Problem]]:
    """Parse one ChatAnime file. Never raises on bad content: problems are returned."""
    slug = Path(name).stem
    source = SourceFile(slug=slug, file=name)
    problems: list[Problem] = []

    def problem(message, **where):
        problems.append(Problem(file=name, message=message, **where))

    if not SOURCE_SLUG.match(slug):
        problem(f"the file name {slug!r} is not a usable source slug (letters, digits, . _ -)")
    elif len(slug) > SLUG_LENGTH:
        problem(f"the file name is too long for a source slug (at most {SLUG_LENGTH} characters)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        problem(f"not valid UTF-8: byte {error.start} is {raw[error.start : error.start + 1]!r}")
        return source, problems
    try:
        content = json.loads(text)
    except json.JSONDecodeError as error:
        problem(f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}")
        return source, problems
    except RecursionError:
        problem("invalid JSON: nested too deeply")
        return source, problems
    if not isinstance(content, dict) or not content:
        problem("expected a non-empty JSON object mapping character keys to dialogues")
        return source, problems

    if SOURCE_METADATA_KEY in content:
        _read_source_metadata(content[SOURCE_METADATA_KEY], source, problem)
    for character_key, dialogues in content.items():
        if character_key == SOURCE_METADATA_KEY:
            continue
        if (reason := unstorable(character_key)) is not None:
            problem(f"the character key {reason}", character=repr(character_key))
            continue
        if (parts := split_character_key(character_key)) is None:
            problem("the character key must look like 《作品》的角色", character=character_key)
            continue
        if len(character_key.strip()) > KEY_LENGTH or max(map(len, parts)) > NAME_LENGTH:
            problem(
                f"the character key is too long (at most {KEY_LENGTH} characters, "
                f"{NAME_LENGTH} for the work and for the name)",
                character=character_key[:60] + "…",
            )
            continue
        if not isinstance(dialogues, list) or not dialogues:
            problem("expected a non-empty list of dialogues", character=character_key)
            continue
        seen_ids: set[int] = set()
        for position, dialogue in enumerate(dialogues, start=1):
            if not isinstance(dialogue, dict):
                problem(f"dialogue #{position} is not a JSON object", character=character_key)
                continue
            dialog_id = dialogue.get("dialog_id")
            where = {"character": character_key, "dialog_id": dialog_id}
            if "dialog_id" not in dialogue:
                problem(f"dialogue #{position} has no dialog_id", character=character_key)
                continue
            if not isinstance(dialog_id, int) or isinstance(dialog_id, bool):
                problem("dialog_id must be an integer", field="dialog_id", **where)
                continue
            if not 1 <= dialog_id <= SCENARIO_COUNT:
                problem(
                    f"dialog_id must be between 1 and {SCENARIO_COUNT}", field="dialog_id", **where
                )
                continue
            if dialog_id in seen_ids:
                problem("duplicate dialog_id for this character", field="dialog_id", **where)
                continue
            seen_ids.add(dialog_id)
            texts = {}
            for text_field in TEXT_FIELDS:
                value = dialogue.get(text_field)
                if text_field not in dialogue:
                    problem("missing", field=text_field, **where)
                elif not isinstance(value, str):
                    problem(
                        f"must be a string, not {type(value).__name__}", field=text_field, **where
                    )
                elif not value.strip():
                    problem("is empty", field=text_field, **where)
                elif (reason := unstorable(value)) is not None:
                    problem(reason, field=text_field, **where)
                elif len(value) > max_length:
                    problem(
                        f"is {len(value)} characters long; the limit is {max_length}",
                        field=text_field,
                        **where,
                    )
                else:
                    texts[text_field] = value.strip()
            author = dialogue.get("author", "")
            if not isinstance(author, str) or unstorable(author) or len(author) > AUTHOR_LENGTH:
                problem(
                    f"must be a pseudonym of at most {AUTHOR_LENGTH} characters",
                    field="author",
                    **where,
                )
            elif len(texts) == len(TEXT_FIELDS):
                source.dialogues.append(
                    Dialogue(character_key.strip(), dialog_id, **texts, author=author.strip())
                )
    if not source.dialogues and not problems:
        problem("holds no dialogues")
    return source, problems


def _read_source_metadata(metadata, source: SourceFile, problem) -> None:
    where = {"field": SOURCE_METADATA_KEY}
    if not isinstance(metadata, dict):
        problem('must be an object such as {"kind": "human"}', **where)
        return
    kind = metadata.get("kind")
    if kind not in SourceKind.values:
        choices = " or ".join(repr(value) for value in SourceKind.values)
        problem(f"kind must be {choices}, not {kind!r}", **where)
    else:
        source.kind = kind
    display_name = metadata.get("display_name", "")
    if (
        not isinstance(display_name, str)
        or unstorable(display_name)
        or len(display_name.strip()) > DISPLAY_NAME_LENGTH
    ):
        problem(f"display_name must be text of at most {DISPLAY_NAME_LENGTH} characters", **where)
    else:
        source.display_name = display_name.strip()


def scenario_problems(sources: Iterable[SourceFile], known: dict[int, str]) -> list[Problem]:
    """A round-1 question is the scenario itself: it must agree with every other file and
    with the scenarios already in the database. `known` is updated with new scenarios."""
    problems = []
    first_seen = {number: "the database" for number in known}
    for source in sources:
        for dialogue in source.dialogues:
            number = dialogue.dialog_id
            if number not in known:
                known[number] = dialogue.question_r1
                first_seen[number] = source.file
            elif normalize_question(known[number]) != normalize_question(dialogue.question_r1):
                problems.append(
                    Problem(
                        file=source.file,
                        character=dialogue.character_key,
                        dialog_id=number,
                        field="question_r1",
                        message=f"differs from scenario {number} as given in {first_seen[number]}",
                    )
                )
    return problems
