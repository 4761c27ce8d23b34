"""Reading and importing answer sets in the ChatAnime JSON format.

A file is one source (its name without `.json` is the source slug) and maps character
keys such as `《海贼王》的蒙奇·D·路飞` to dialogues
`{dialog_id, question_r1, answer_r1, question_r2, answer_r2}`.

Reading is pure: `read_source_file` turns bytes into records or a list of problems that
name the file, character and dialog id. `import_chatanime` validates every file before it
writes anything, then writes all of it in one transaction, so a bad file anywhere leaves
the database as it was.
"""

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from .models import (
    SCENARIO_COUNT,
    Answer,
    Character,
    Scenario,
    Source,
    SourceKind,
    persona_group_for,
)
from .planner import planner_statistics_refresh

TEXT_FIELDS = ("question_r1", "answer_r1", "question_r2", "answer_r2")
CHARACTER_KEY = re.compile(r"^《(?P<work>[^》]+)》的(?P<name>.+)$")
HUMAN_SOURCE_SLUG = "human"
SOURCE_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
BATCH_SIZE = 2000
KEY_LENGTH = Character._meta.get_field("key").max_length
NAME_LENGTH = min(
    Character._meta.get_field("work_zh").max_length,
    Character._meta.get_field("name_zh").max_length,
)
SLUG_LENGTH = Source._meta.get_field("slug").max_length


class ImportFailed(Exception):
    def __init__(self, problems: list["Problem"]):
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))


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


@dataclass
class SourceFile:
    slug: str
    file: str
    dialogues: list[Dialogue] = field(default_factory=list)


@dataclass
class ImportReport:
    files: int = 0
    sources_created: int = 0
    characters_created: int = 0
    scenarios_created: int = 0
    answers_created: int = 0
    answers_updated: int = 0
    answers_unchanged: int = 0

    @property
    def changed_anything(self) -> bool:
        return any(
            (
                self.sources_created,
                self.characters_created,
                self.scenarios_created,
                self.answers_created,
                self.answers_updated,
            )
        )


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


def source_files_in(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    return [path]


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

    for character_key, dialogues in content.items():
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
            if len(texts) == len(TEXT_FIELDS):
                source.dialogues.append(Dialogue(character_key.strip(), dialog_id, **texts))
    return source, problems


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


def read_path(path: Path, max_length: int | None = None) -> list[SourceFile]:
    """Read and validate every file under `path`; raise ImportFailed listing all problems."""
    max_length = max_length or settings.CHATANIME_MAX_TEXT_LENGTH
    if not path.exists():
        raise ImportFailed([Problem(file=str(path), message="no such file or directory")])
    files = source_files_in(path)
    if not files:
        raise ImportFailed([Problem(file=str(path), message="contains no .json files")])
    sources, problems = [], []
    for file in files:
        try:
            raw = file.read_bytes()
        except OSError as error:
            problems.append(Problem(file=file.name, message=f"cannot be read: {error.strerror}"))
            continue
        source, file_problems = read_source_file(file.name, raw, max_length)
        sources.append(source)
        problems.extend(file_problems)
    slugs = [source.slug for source in sources]
    for slug in {slug for slug in slugs if slugs.count(slug) > 1}:
        problems.append(Problem(file=str(path), message=f"source {slug!r} is given twice"))
    if problems:
        raise ImportFailed(problems)
    return sources


def import_chatanime(path: Path) -> ImportReport:
    """Import a directory or file of ChatAnime answers; all or nothing, idempotent."""
    sources = read_path(Path(path))
    report = ImportReport(files=len(sources))
    with transaction.atomic():
        known_scenarios = dict(Scenario.objects.values_list("number", "question"))
        problems = scenario_problems(sources, known_scenarios)
        if problems:
            raise ImportFailed(problems)
        scenario_ids = _ensure_scenarios(known_scenarios, report)
        character_ids = _ensure_characters(sources, report)
        source_ids = _ensure_sources(sources, report)
        _upsert_answers(sources, scenario_ids, character_ids, source_ids, report)
        planner_statistics_refresh(Scenario, Character, Source, Answer)
    return report


def _ensure_scenarios(questions: dict[int, str], report: ImportReport) -> dict[int, int]:
    existing = dict(Scenario.objects.values_list("number", "id"))
    new = [
        Scenario(number=number, question=question, persona_group=persona_group_for(number))
        for number, question in sorted(questions.items())
        if number not in existing
    ]
    Scenario.objects.bulk_create(new)
    report.scenarios_created = len(new)
    return dict(Scenario.objects.values_list("number", "id"))


def _ensure_characters(sources: list[SourceFile], report: ImportReport) -> dict[str, int]:
    existing = dict(Character.objects.values_list("key", "id"))
    keys = dict.fromkeys(d.character_key for s in sources for d in s.dialogues)
    new = []
    for key in keys:
        if key not in existing:
            work, name = split_character_key(key)
            new.append(Character(key=key, work_zh=work, name_zh=name))
    Character.objects.bulk_create(new)
    report.characters_created = len(new)
    return dict(Character.objects.values_list("key", "id"))


def source_display_name(slug: str) -> str:
    return "Human fans" if slug == HUMAN_SOURCE_SLUG else slug


def _ensure_sources(sources: list[SourceFile], report: ImportReport) -> dict[str, int]:
    existing = set(Source.objects.values_list("slug", flat=True))
    new = [
        Source(
            slug=s.slug,
            kind=SourceKind.HUMAN if s.slug == HUMAN_SOURCE_SLUG else SourceKind.LLM,
            display_name=source_display_name(s.slug),
        )
        for s in sources
        if s.slug not in existing
    ]
    Source.objects.bulk_create(new)
    report.sources_created = len(new)
    return dict(Source.objects.values_list("slug", "id"))


def _upsert_answers(sources, scenario_ids, character_ids, source_ids, report: ImportReport):
    wanted = {}
    for source in sources:
        source_id = source_ids[source.slug]
        for d in source.dialogues:
            cell = (character_ids[d.character_key], scenario_ids[d.dialog_id], source_id)
            wanted[(*cell, 1)] = (d.question_r1, d.answer_r1)
            wanted[(*cell, 2)] = (d.question_r2, d.answer_r2)

    existing = {
        (a.character_id, a.scenario_id, a.source_id, a.round): a
        for a in Answer.objects.filter(source_id__in=source_ids.values()).only(
            "id", "character_id", "scenario_id", "source_id", "round", "question", "text"
        )
    }
    to_create, to_update = [], []
    for (character_id, scenario_id, source_id, round_), (question, text) in wanted.items():
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
                )
            )
        elif answer.question != question or answer.text != text:
            answer.question, answer.text = question, text
            to_update.append(answer)
    Answer.objects.bulk_create(to_create, batch_size=BATCH_SIZE)
    Answer.objects.bulk_update(to_update, ["question", "text"], batch_size=BATCH_SIZE)
    report.answers_created = len(to_create)
    report.answers_updated = len(to_update)
    report.answers_unchanged = len(wanted) - len(to_create) - len(to_update)
