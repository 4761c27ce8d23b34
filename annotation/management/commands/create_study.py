from django.core.management.base import CommandError
from django.db.models import Q

from annotation import selectors, services
from annotation.models import PairingDesign
from common import commands
from common.parsing import whole_number
from dialogues.models import Character, Source, SourceKind


def comma_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class Command(commands.Command):
    help = (
        "Create a study (and with --open, generate its items). Prints how many approved "
        "annotators each character needs, and the study's slug on the last line."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--reference", default="human", help="slug of the reference source")
        parser.add_argument(
            "--sources", type=comma_list, help="compared source slugs (default: all LLMs)"
        )
        parser.add_argument(
            "--characters",
            type=comma_list,
            help="character keys, Chinese names or ids (default: all)",
        )
        parser.add_argument("--rounds", type=comma_list, default=["1", "2"])
        parser.add_argument("--overlap", type=int, default=3, help="judgments per item")
        parser.add_argument(
            "--design", choices=PairingDesign.values, default=PairingDesign.REFERENCE
        )
        parser.add_argument("--diversity", action="store_true", help="include diversity sets")
        parser.add_argument(
            "--human-guess", action="store_true", help="ask which answer a fan wrote"
        )
        parser.add_argument("--open", action="store_true", help="open the study now")

    def handle(self, *args, **options):
        reference = Source.objects.filter(slug=options["reference"]).first()
        if reference is None:
            raise CommandError(f"no source {options['reference']!r}; import answers first")
        if options["sources"]:
            compared = list(Source.objects.filter(slug__in=options["sources"]))
            missing = set(options["sources"]) - {s.slug for s in compared}
            if missing:
                raise CommandError(f"unknown source(s): {', '.join(sorted(missing))}")
        else:
            compared = list(Source.objects.filter(kind=SourceKind.LLM).exclude(pk=reference.pk))
        characters = self._characters(options["characters"])
        try:
            rounds = tuple(int(r) for r in options["rounds"])
        except ValueError:
            raise CommandError("--rounds takes 1, 2 or 1,2") from None
        try:
            study = services.study_create(
                name=options["name"],
                reference=reference,
                compared=compared,
                characters=characters,
                rounds=rounds,
                overlap=options["overlap"],
                design=options["design"],
                include_diversity=options["diversity"],
                ask_human_guess=options["human_guess"],
            )
        except services.AnnotationError as refusal:
            raise CommandError(refusal.message) from None
        if options["open"]:
            items = services.study_open(study=study)
            self.stdout.write(f"Opened with {items} items.")
        self.stdout.write(
            f"Design {study.design}: {len(compared)} compared source(s) against {reference.slug}, "
            f"rounds {','.join(map(str, study.rounds))}, overlap {study.overlap}."
        )
        self.stdout.write("Approved annotators per character (needed / approved):")
        for row in selectors.study_capacity(study):
            short = f"  short by {row.short}" if row.short else ""
            self.stdout.write(f"  {row.character.key}: {row.needed} / {row.approved}{short}")
        self.stdout.write(study.slug)

    def _characters(self, wanted):
        if not wanted:
            characters = list(Character.objects.all())
            if not characters:
                raise CommandError("no characters; import answers first")
            return characters
        found, missing = [], []
        for name in wanted:
            query = Q(key=name) | Q(name_zh=name) | Q(name_en__iexact=name)
            if (pk := whole_number(name)) is not None:
                query |= Q(pk=pk)
            character = Character.objects.filter(query).first()
            (found if character else missing).append(character or name)
        if missing:
            raise CommandError(f"unknown character(s): {', '.join(missing)}")
        return found
