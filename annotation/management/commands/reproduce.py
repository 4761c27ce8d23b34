from django.core.management.base import CommandError

from annotation.methods import METHODS_VERSION
from annotation.reproduce import (
    TOLERANCE,
    SnapshotError,
    opened_snapshot,
    read_snapshot,
    reproduce,
    verify_files,
)
from common import commands
from common.snapshots import snapshot_checks

# How many differing figures are named per family; the rest are counted.
SHOWN = 10


def _methods_version(results: dict) -> str | None:
    payload = results.get("payload", results)
    return ((payload.get("statistics") or {}).get("methods") or {}).get("version")


class Command(commands.Command):
    help = (
        "Check an export snapshot's files against the SHA-256 checksums of its manifest, "
        "recompute every figure of the study's results from the snapshot alone (no "
        "database), and fail, naming them, if any file or any published figure (point, "
        "interval bound or status) differs beyond rounding."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "snapshot",
            metavar="SNAPSHOT",
            help="the directory of export_ratings --snapshot DIR --study SLUG, or the "
            "snapshot zip the results page prepares (or the folder it unpacks to)",
        )

    def handle(self, *args, snapshot: str, **options):
        try:
            with opened_snapshot(snapshot) as directory:
                manifest, _results, _rows = read_snapshot(directory)
                changed_files = verify_files(directory, manifest)
                _rebuilt, differences = reproduce(directory)
                # Other apps' figures in the snapshot (the LLM judges'), rebuilt the same way.
                for name, check in snapshot_checks():
                    if name in manifest.get("files", {}):
                        differences.update(check(directory))
        except SnapshotError as error:
            raise CommandError(str(error)) from error
        for problem in changed_files:
            self.stdout.write(f"file changed since the export: {problem}")
        published_version = _methods_version(_results)
        if published_version != METHODS_VERSION:
            # The figures were published by other statistics: those that changed between
            # the versions differ, and say nothing about the snapshot's data.
            self.stdout.write(
                f"the results were published under {published_version or 'an unrecorded'} "
                f"methods version; this platform computes {METHODS_VERSION}: figures whose "
                "method changed between the two will differ (see the methods text's history)"
            )
        self.stdout.write(f"{'family':<26} {'figures':>8} {'points':>12} {'intervals':>12}")
        failed = []
        for family, difference in differences.items():
            self.stdout.write(
                f"{family:<26} {difference.compared:>8} {difference.points:>12.2e} "
                f"{difference.intervals:>12.2e}"
            )
            for label, paths in (
                ("only on one side", difference.missing),
                ("differs", difference.differing),
            ):
                for path in paths[:SHOWN]:
                    self.stdout.write(f"  {label}: {family}/{path}")
                if len(paths) > SHOWN:
                    self.stdout.write(f"  {label}: and {len(paths) - SHOWN} more")
            if not difference.reproduced:
                failed.append(family)
        if changed_files or failed:
            named = [f"file {problem.split(':')[0]}" for problem in changed_files] + failed
            raise CommandError(f"not reproduced: {', '.join(named)}")
        self.stdout.write(
            f"every file matches the manifest; every figure (points and interval bounds) "
            f"reproduced within {TOLERANCE:.0e}"
        )
