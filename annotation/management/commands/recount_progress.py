from django.core.management.base import CommandError

from annotation import services
from annotation.models import CharacterProgress, Study
from common import commands


class Command(commands.Command):
    help = (
        "Count each study's progress per character afresh from its items: what every plan "
        "orders characters by. The submissions keep it; this repairs it after items were "
        "changed outside the site (SQL, a restored backup)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", help="study slug (default: every study)")

    def handle(self, *args, study: str | None, **options):
        if study:
            studies = list(Study.objects.filter(slug=study))
            if not studies:
                raise CommandError(f"no study {study!r}")
        else:
            studies = list(Study.objects.order_by("pk"))
        for target in studies:
            before = _counts(target)
            services.character_progress_recount(study=target)
            after = _counts(target)
            changed = sum(1 for key in after if before.get(key) != after[key])
            self.stdout.write(
                f"{target.slug}: {len(after)} characters, {changed} counted differently before"
            )


def _counts(study: Study) -> dict[int, tuple[int, int]]:
    return {
        character_id: (judgments, items)
        for character_id, judgments, items in CharacterProgress.objects.filter(
            study=study
        ).values_list("character_id", "judgments", "items")
    }
