import contextlib

from django.core.management.base import BaseCommand, CommandError

from annotation import exports
from annotation.models import Study


class Command(BaseCommand):
    help = "Export every rating, unblinded: long CSV (one row per rating), JSONL, or wide CSV (one row per judgment)."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=exports.KINDS, default="csv")
        parser.add_argument("--study", help="study slug (default: all studies)")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")
        parser.add_argument(
            "--include-excluded",
            action="store_true",
            help="also excluded judgments, with an `excluded` column",
        )
        parser.add_argument(
            "--bom", action="store_true", help="start with a UTF-8 byte order mark (for Excel)"
        )

    def handle(
        self,
        *args,
        format: str,
        study: str | None,
        output: str | None,
        include_excluded: bool,
        bom: bool,
        **options,
    ):
        target = None
        if study:
            target = Study.objects.filter(slug=study).first()
            if target is None:
                raise CommandError(f"no study {study!r}")
        with contextlib.ExitStack() as stack:
            if output:
                encoding = "utf-8-sig" if bom else "utf-8"
                stream = stack.enter_context(open(output, "w", encoding=encoding, newline=""))
            else:
                stream = self.stdout
                if bom:
                    stream.write("\ufeff")
            n = -1 if format != "jsonl" else 0  # the CSV header is not a row
            for line in exports.export_lines(target, format, include_excluded):
                stream.write(line)
                n += 1
        if output:
            self.stderr.write(f"{n} rows written to {output}")
