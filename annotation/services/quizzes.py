"""The screening question bank shipped with the platform, loaded into the database.

The bundled file (`annotation/screening_data/quizzes.json`) holds multiple-choice
questions for every character of the published ChatAnime data, each naming the public
pages it was checked against (`sources`, summarised in `quizzes_sources.md`). Loading is all or
nothing and idempotent: a question is matched by character and Chinese prompt, and one
that already exists is left as it is, so that staff corrections made in the admin are
never overwritten by a later load.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from dialogues.models import Character

from ..models import ScreeningQuestion

BUNDLED_QUIZZES = Path(__file__).resolve().parent.parent / "screening_data" / "quizzes.json"
MIN_CHOICES, MAX_CHOICES = 2, 6
MAX_PROMPT_LENGTH = 500


class QuizFileInvalid(Exception):
    """The file cannot be loaded; `problems` name the file, character, question and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:5]))


@dataclass
class QuizLoadReport:
    created: int = 0
    unchanged: int = 0
    characters: int = 0
    # Characters of the file that are not in the database (their answers are not imported).
    absent_characters: list[str] = field(default_factory=list)


def _text(value) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= MAX_PROMPT_LENGTH


def _question_problems(where: str, question) -> list[str]:
    if not isinstance(question, dict):
        return [f"{where}: must be an object"]
    problems = []
    for name in ("prompt_zh", "prompt_en"):
        if not _text(question.get(name)):
            problems.append(f"{where}: {name} must be non-empty text of at most 500 characters")
    choices = question.get("choices")
    if not isinstance(choices, list) or not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        problems.append(f"{where}: choices must be a list of 2 to 6 choices")
        return problems
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict) or not all(_text(choice.get(k)) for k in ("zh", "en")):
            problems.append(f"{where}: choice {index} needs non-empty 'zh' and 'en' text")
    labels = [c.get("zh") for c in choices if isinstance(c, dict)]
    if len(set(labels)) != len(labels):
        problems.append(f"{where}: two choices have the same Chinese text")
    # Optional: the public pages a question was checked against. A question with a wrong
    # "correct" answer rejects real fans, so staff re-check it against these.
    sources = question.get("sources")
    if sources is not None and not (
        isinstance(sources, list)
        and sources
        and all(isinstance(s, str) and s.startswith(("https://", "http://")) for s in sources)
    ):
        problems.append(f"{where}: sources must be a non-empty list of http(s) addresses")
    correct = question.get("correct_choice")
    if type(correct) is not int or not 0 <= correct < len(choices):
        problems.append(
            f"{where}: correct_choice must be a whole number from 0 to {len(choices) - 1}"
        )
    return problems


def quiz_file_read(path: Path) -> dict[str, list[dict]]:
    """The questions of a quiz file by character key, or QuizFileInvalid listing every
    problem found."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise QuizFileInvalid([f"{path}: cannot be read ({error.strerror or error})"]) from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise QuizFileInvalid([f"{path}: not UTF-8 (byte {error.start})"]) from None
    except json.JSONDecodeError as error:
        raise QuizFileInvalid(
            [f"{path}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"]
        ) from None
    characters = document.get("characters") if isinstance(document, dict) else None
    if not isinstance(characters, dict) or not characters:
        raise QuizFileInvalid([f"{path}: expected an object with a non-empty 'characters' object"])
    problems = []
    for key, questions in characters.items():
        if not isinstance(questions, list) or not questions:
            problems.append(f"{path}: {key}: must be a non-empty list of questions")
            continue
        seen = set()
        for number, question in enumerate(questions, start=1):
            where = f"{path}: {key}: question {number}"
            problems.extend(_question_problems(where, question))
            prompt = question.get("prompt_zh") if isinstance(question, dict) else None
            if prompt in seen:
                problems.append(f"{where}: the same prompt_zh appears twice")
            seen.add(prompt)
    if problems:
        raise QuizFileInvalid(problems)
    return characters


@transaction.atomic
def screening_questions_load(*, path: Path = BUNDLED_QUIZZES) -> QuizLoadReport:
    """Add the file's questions for the characters in the database. Everything is checked
    before anything is written."""
    bank = quiz_file_read(path)
    report = QuizLoadReport()
    characters = {c.key: c for c in Character.objects.filter(key__in=list(bank))}
    report.absent_characters = [key for key in bank if key not in characters]
    existing = set(
        ScreeningQuestion.objects.filter(character__in=characters.values()).values_list(
            "character_id", "prompt_zh"
        )
    )
    new = []
    for key, character in characters.items():
        report.characters += 1
        for question in bank[key]:
            if (character.pk, question["prompt_zh"]) in existing:
                report.unchanged += 1
                continue
            new.append(
                ScreeningQuestion(
                    character=character,
                    prompt_zh=question["prompt_zh"],
                    prompt_en=question["prompt_en"],
                    choices=[{"zh": c["zh"], "en": c["en"]} for c in question["choices"]],
                    correct_choice=question["correct_choice"],
                )
            )
    ScreeningQuestion.objects.bulk_create(new)
    report.created = len(new)
    return report
