import os
import sys

from django.core.management.base import CommandError

from annotation import exports
from annotation.models import Study
from common import commands


class Command(commands.Command):
    help = (
        "Export every rating, unblinded: long CSV (one row per rating), JSONL, or wide CSV "
        "(one row per judgment); or, with --snapshot, all three with the audit trail, the "
        "answers, the results and a manifest."
    )

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=exports.KINDS, default="csv")
        parser.add_argument("--study", help="study slug (default: all studies)")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")
        parser.add_argument(
            "--snapshot",
            metavar="DIR",
            help="write the long CSV, wide CSV, JSONL and manifest.json into DIR (new or empty)",
        )
        parser.add_argument(
            "--include-excluded",
            action="store_true",
            help="also excluded judgments, with an `excluded` column",
        )
        parser.add_argument(
            "--bom", action="store_true", help="start with a UTF-8 byte order mark (for Excel)"
        )
        parser.add_argument(
            "--engine",
            choices=exports.ENGINES,
            default="auto",
            help="auto: COPY for the long CSV on PostgreSQL, Python rows otherwise",
        )

    def handle(
        self,
        *args,
        format: str,
        study: str | None,
        output: str | None,
        snapshot: str | None,
        include_excluded: bool,
        bom: bool,
        engine: str,
        **options,
    ):
        target = None
        if study:
            target = Study.objects.filter(slug=study).first()
            if target is None:
                raise CommandError(f"no study {study!r}")
        if snapshot:
            if output:
                raise CommandError("--snapshot writes its own files; leave out -o")
            self._snapshot(snapshot, target, include_excluded, bom)
            return
        if output:
            try:
                manifest = exports.file_write(
                    output,
                    target,
                    format,
                    include_excluded=include_excluded,
                    bom=bom,
                    engine=engine,
                    command=_file_command(output, format, target, include_excluded, bom),
                )
            except exports.ExportError as error:
                raise CommandError(str(error)) from error
            except OSError as error:
                raise CommandError(f"cannot write {output}: {error.strerror or error}") from error
            (described,) = manifest["files"].values()
            self.stderr.write(f"{described['rows']} rows written to {output}")
            self.stderr.write(f"manifest written to {exports.file_manifest_path(output)}")
            return
        try:
            chunks = exports.counted_chunks(
                target, format, include_excluded, bom=bom, engine=engine
            )
        except exports.ExportError as error:
            raise CommandError(str(error)) from error
        try:
            for data, _count in chunks:
                self.stdout.write(data.decode(), ending="")
            self.stdout.flush()
        except BrokenPipeError:
            # The reader stopped early (`export_ratings | head`), which is no error. The
            # rows still buffered for standard output would raise again when Python
            # flushes it on exit: it goes to /dev/null instead (Python's own advice).
            if options.get("stdout") is None:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    def _snapshot(self, directory, study, include_excluded, bom):
        try:
            manifest = exports.snapshot_write(
                directory,
                study,
                include_excluded=include_excluded,
                bom=bom,
                command=_described(directory, study, include_excluded, bom),
            )
        except exports.ExportError as error:
            raise CommandError(str(error)) from error
        for name, described in manifest["files"].items():
            self.stderr.write(f"{described['rows']} rows in {name}")
        self.stderr.write(f"snapshot written to {directory}")


def _described(directory, study, include_excluded, bom) -> str:
    """The command line that makes this snapshot again."""
    words = ["export_ratings", "--snapshot", str(directory)]
    if study is not None:
        words += ["--study", study.slug]
    if include_excluded:
        words.append("--include-excluded")
    if bom:
        words.append("--bom")
    return " ".join(words)


def _file_command(output, format, study, include_excluded, bom) -> str:
    """The command line that writes this file again."""
    words = ["export_ratings", "--format", format, "-o", str(output)]
    if study is not None:
        words += ["--study", study.slug]
    if include_excluded:
        words.append("--include-excluded")
    if bom:
        words.append("--bom")
    return " ".join(words)
