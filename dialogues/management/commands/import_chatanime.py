from pathlib import Path

from django.core.management.base import CommandError

from common import commands
from dialogues.importer import ImportFailed, import_chatanime


class Command(commands.Command):
    help = (
        "Import answers in the ChatAnime JSON format from a directory of source files or "
        "one file. All or nothing; running it again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "path", type=Path, help="a directory of <source>.json files, or one file"
        )

    def handle(self, *args, path: Path, **options):
        try:
            report = import_chatanime(path)
        except ImportFailed as failure:
            for problem in failure.problems[:50]:
                # Bad input may hold text that a terminal cannot print as it is.
                line = f"  {problem}".encode("utf-8", "backslashreplace").decode("utf-8")
                self.stderr.write(line)
            hidden = len(failure.problems) - 50
            if hidden > 0:
                self.stderr.write(f"  … and {hidden} more problems")
            if failure.hint:
                self.stderr.write(failure.hint)
            raise CommandError(
                f"import failed with {len(failure.problems)} problem(s); nothing was written"
            ) from None
        self.stdout.write(
            f"Read {report.files} file(s): "
            f"{report.sources_created} new source(s), {report.characters_created} new character(s), "
            f"{report.scenarios_created} new scenario(s); answers: {report.answers_created} created, "
            f"{report.answers_updated} updated, {report.answers_unchanged} unchanged."
        )
        if not report.changed_anything:
            self.stdout.write(
                self.style.SUCCESS("Nothing changed: everything was already imported.")
            )
        else:
            self.stdout.write(self.style.SUCCESS("Import complete."))
