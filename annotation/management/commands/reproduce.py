from django.core.management.base import BaseCommand, CommandError

from annotation.reproduce import SnapshotError, reproduce

# Points must agree to rounding; bootstrap bounds within Monte Carlo error.
POINT_TOLERANCE = 1e-6


class Command(BaseCommand):
    help = (
        "Recompute every figure of a study's results from an export snapshot alone (no "
        "database) and print the largest difference from the published figures per family."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "snapshot", metavar="SNAPSHOT_DIR", help="export_ratings --snapshot DIR --study SLUG"
        )

    def handle(self, *args, snapshot: str, **options):
        try:
            _rebuilt, differences = reproduce(snapshot)
        except SnapshotError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{'family':<26} {'figures':>8} {'points':>12} {'intervals':>12}")
        failed = []
        for family, difference in differences.items():
            self.stdout.write(
                f"{family:<26} {difference.compared:>8} {difference.points:>12.2e} "
                f"{difference.intervals:>12.2e}"
            )
            if difference.missing:
                shown = ", ".join(difference.missing[:5])
                more = len(difference.missing) - 5
                self.stdout.write(
                    f"  only on one side: {shown}" + (f" (and {more} more)" if more > 0 else "")
                )
            if difference.points > POINT_TOLERANCE or difference.missing:
                failed.append(family)
        if failed:
            raise CommandError(f"not reproduced: {', '.join(failed)}")
        self.stdout.write(f"every point figure reproduced within {POINT_TOLERANCE:g}")
