import json as json_module

from django.core.management.base import CommandError

from annotation import methods as methods_module
from annotation import services
from annotation.models import Study
from common import commands
from common.recomputes import study_parts_recompute


class Command(commands.Command):
    help = "Recompute the derived results (agreement, leaderboards, …) now, as the workers do."

    def add_arguments(self, parser):
        parser.add_argument("--study", help="study slug (default: every study with judgments)")
        parser.add_argument(
            "--json", action="store_true", help="print the results of one study as JSON"
        )
        parser.add_argument(
            "--methods",
            action="store_true",
            help="print the methods paragraph of one study (after recomputing it)",
        )
        parser.add_argument(
            "--language", choices=methods_module.LANGUAGES, default="en", help="of the methods text"
        )

    def handle(self, *args, study: str | None, json: bool, methods: bool, language: str, **options):
        if study:
            studies = list(Study.objects.filter(slug=study))
            if not studies:
                raise CommandError(f"no study {study!r}")
        else:
            studies = list(Study.objects.filter(items__judgments__isnull=False).distinct())
        if (json or methods) and len(studies) != 1:
            raise CommandError("--json and --methods print one study: choose it with --study")
        for target in studies:
            results = services.study_recompute(study=target)
            # Other apps' figures about the study (the LLM judges'), recomputed with it and
            # printed beside the results; the stored results document stays the humans'.
            parts = study_parts_recompute(target)
            if json:
                self.stdout.write(_dumps({**results.payload, **parts}))
            elif methods:
                self.stdout.write(
                    methods_module.methods_text(
                        methods_module.methods_facts(target, results), language
                    )
                )
            else:
                self.stdout.write(
                    f"{target.slug}: {results.judgments} judgments, computed in {results.seconds:.2f} s"
                )


def _dumps(payload) -> str:
    return json_module.dumps(payload, ensure_ascii=False, sort_keys=True)
