"""Importing answer sets in the ChatAnime JSON format (`chatanime_format`).

`import_chatanime` validates every file before it writes anything, then writes all of it
in one transaction, so a bad file anywhere leaves the database as it was.
"""

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from .character_names import ENGLISH_NAMES
from .chatanime_format import (
    SOURCE_METADATA_KEY,
    Problem,
    SourceFile,
    normalize_question,
    read_source_file,
    scenario_problems,
    split_character_key,
    unstorable,
)
from .models import Answer, Character, Scenario, Source, persona_group_for
from .planner import planner_statistics_refresh
from .services import (
    SourceKindConflict,
    answers_put_many,
    kind_label,
    source_display_name,
    source_get_or_create,
)

__all__ = [
    "ImportFailed",
    "ImportReport",
    "Problem",
    "import_chatanime",
    "normalize_question",
    "read_path",
    "read_source_file",
    "split_character_key",
    "unstorable",
]


class ImportFailed(Exception):
    def __init__(self, problems: list["Problem"], hint: str = ""):
        self.problems = problems
        self.hint = hint  # what to do about them, where one thing explains them all
        super().__init__("\n".join(str(problem) for problem in problems))


# Scenario numbers are shared by every data set in the ChatAnime format (the demo's
# included), so files of another data set meet the scenarios already here on every line.
ANOTHER_DATA_SET = (
    "Scenarios {numbers} are already in this database with other texts: it holds another "
    "data set (the demo's numbers its scenarios as the published data does). Import into a "
    "database of its own: `make run DATA=PATH` keeps a SQLite file for each data set "
    "(db-NAME.sqlite3), or set DATABASE_URL to an empty database."
)


def _clash_hint(problems: list["Problem"], in_database: dict[int, str]) -> str:
    numbers = sorted(
        {
            problem.dialog_id
            for problem in problems
            if isinstance(problem.dialog_id, int) and problem.dialog_id in in_database
        }
    )
    if not numbers:
        return ""
    return ANOTHER_DATA_SET.format(numbers=", ".join(str(number) for number in numbers))


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


def source_files_in(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    return [path]


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
        in_database = dict(known_scenarios)
        problems = scenario_problems(sources, known_scenarios)
        if problems:
            raise ImportFailed(problems, hint=_clash_hint(problems, in_database))
        scenario_ids = _ensure_scenarios(known_scenarios, report)
        character_ids = _ensure_characters(sources, report)
        source_ids = _ensure_sources(sources, report)
        if source_ids is None:
            raise ImportFailed(_source_kind_problems(sources))
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
            work_en, name_en = ENGLISH_NAMES.get(key, ("", ""))
            new.append(
                Character(key=key, work_zh=work, name_zh=name, work_en=work_en, name_en=name_en)
            )
    Character.objects.bulk_create(new)
    report.characters_created = len(new)
    return dict(Character.objects.values_list("key", "id"))


def _source_kind_problems(sources: list[SourceFile]) -> list[Problem]:
    held = dict(Source.objects.values_list("slug", "kind"))
    return [
        Problem(
            file=s.file,
            field=SOURCE_METADATA_KEY,
            message=(
                f"says the source {s.slug!r} is {kind_label(s.kind)}, but it is held here as "
                f"{kind_label(held[s.slug])}; import it under another file name"
            ),
        )
        for s in sources
        if s.kind is not None and s.slug in held and held[s.slug] != s.kind
    ]


def _ensure_sources(sources: list[SourceFile], report: ImportReport) -> dict[str, int] | None:
    """The sources' ids, created where new; None when a file states a kind that
    contradicts a source already held (the caller reports every such file)."""
    if _source_kind_problems(sources):
        return None
    existing = dict(Source.objects.values_list("slug", "kind"))
    for s in sources:
        # A file that does not state its kind takes the source it names as it is.
        kind = s.kind or existing.get(s.slug) or s.kind_or_default
        try:
            _, created = source_get_or_create(
                slug=s.slug,
                kind=kind,
                display_name=s.display_name or source_display_name(s.slug),
            )
        except SourceKindConflict:  # created meanwhile by another process
            return None
        report.sources_created += created
    return dict(Source.objects.values_list("slug", "id"))


def _upsert_answers(sources, scenario_ids, character_ids, source_ids, report: ImportReport):
    wanted = {}
    for source in sources:
        source_id = source_ids[source.slug]
        for d in source.dialogues:
            cell = (character_ids[d.character_key], scenario_ids[d.dialog_id], source_id)
            wanted[(*cell, 1)] = (d.question_r1, d.answer_r1, d.author)
            wanted[(*cell, 2)] = (d.question_r2, d.answer_r2, d.author)
    created, updated = answers_put_many(wanted, sources=source_ids.values())
    report.answers_created = created
    report.answers_updated = updated
    report.answers_unchanged = len(wanted) - created - updated
