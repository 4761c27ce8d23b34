from pathlib import Path

from django.core.management.base import CommandError

from collection.exports import source_export
from common import commands
from dialogues.models import Source


class Command(commands.Command):
    help = (
        "Write a source's accepted answers to DIR/SLUG.json in the ChatAnime format "
        "(what import_chatanime reads)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--source", required=True, help="slug of the answer source")
        parser.add_argument("-o", "--output", required=True, type=Path, help="directory")

    def handle(self, *args, source: str, output: Path, **options):
        found = Source.objects.filter(slug=source).first()
        if found is None:
            raise CommandError(f"there is no source {source!r}")
        if output.exists() and not output.is_dir():
            raise CommandError(f"{output} exists and is not a directory")
        path, written, incomplete = source_export(source=found, directory=output)
        if path is None:
            raise CommandError(
                f"source {source!r} has no dialogue with both rounds accepted; nothing written"
            )
        self.stdout.write(self.style.SUCCESS(f"Wrote {written} dialogues to {path}."))
        if incomplete:
            self.stdout.write(
                f"{incomplete} dialogue(s) were left out: the format needs both rounds, "
                "and one of theirs is missing or waiting for review."
            )
