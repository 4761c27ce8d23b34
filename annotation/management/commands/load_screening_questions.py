from pathlib import Path

from django.core.management.base import CommandError

from annotation import services
from common import commands


class Command(commands.Command):
    help = (
        "Load screening quiz questions (the bundled bank by default) for the characters in "
        "the database. All or nothing; questions already there, edited or not, are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "path",
            nargs="?",
            type=Path,
            default=services.BUNDLED_QUIZZES,
            help="a quiz file (default: the bundled annotation/screening_data/quizzes.json)",
        )

    def handle(self, *args, path: Path, **options):
        try:
            report = services.screening_questions_load(path=path)
        except services.QuizFileInvalid as failure:
            for problem in failure.problems[:50]:
                line = f"  {problem}".encode("utf-8", "backslashreplace").decode("utf-8")
                self.stderr.write(line)
            raise CommandError(
                f"{len(failure.problems)} problem(s) in the quiz file; nothing was written"
            ) from None
        self.stdout.write(
            f"Quiz questions for {report.characters} character(s): "
            f"{report.created} created, {report.unchanged} already there."
        )
        if report.absent_characters:
            self.stdout.write(
                f"{len(report.absent_characters)} character(s) of the file are not imported "
                "yet; run this again after importing their answers."
            )
