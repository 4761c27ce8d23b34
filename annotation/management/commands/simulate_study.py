from django.core.management.base import CommandError

from annotation import services
from annotation.models import Study
from annotation.simulation import annotators_for, simulate_study, simulated_workloads
from annotation.stats.crowd import effective_number
from common import commands
from dialogues.models import Source


class Command(commands.Command):
    help = (
        "Fill an open study with judgments from simulated annotators (for demos and "
        "benchmarks). Refuses a study that has real judgments."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="study slug")
        parser.add_argument("--annotators", type=int, help="default: as many as the design needs")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--workload-sd",
            type=float,
            default=0.0,
            help="skewed workloads: sd of the annotators' lognormal weights (default 0: even)",
        )

    def handle(
        self, *args, study: str, annotators: int | None, seed: int, workload_sd: float, **options
    ):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"no study {study!r}")
        count = annotators or annotators_for(target)
        try:
            made, truth = simulate_study(
                study=target, annotators=count, seed=seed, workload_sd=workload_sd
            )
        except services.AnnotationError as refusal:
            raise CommandError(refusal.message) from None
        slugs = dict(Source.objects.values_list("pk", "slug"))
        self.stdout.write(f"{made} simulated judgments from {count} annotators in {target.slug}.")
        self.stdout.write("True ranking: " + " > ".join(slugs[s] for s in truth.ranking()))
        if not made:
            self.stderr.write(
                "No item was given to the simulated annotators: the study's items already "
                "have their judgments, or its caps leave no room."
            )
        self._say_workloads(target, workload_sd)

    def _say_workloads(self, study: Study, workload_sd: float) -> None:
        workloads = simulated_workloads(study)
        if not workloads:
            return
        effective = effective_number(workloads)
        self.stdout.write(
            f"Workloads: {workloads[-1]} to {workloads[0]} judgments per annotator "
            f"(effective number of annotators {effective:.1f} of the {len(workloads)} who rated)."
        )
        # Nobody rates an answer twice, so each annotator can take only so much: with just
        # the annotators the design needs, every one of them takes all they may, whatever
        # their weight, and a skew asked for does not show.
        if workload_sd > 0 and effective > 0.95 * len(workloads):
            self.stderr.write(
                f"The workloads came out nearly even although --workload-sd {workload_sd:g} "
                "asked for a skewed crowd: with this few annotators each one rates all "
                "they may. Give more --annotators (the design needs "
                f"{annotators_for(study)}) for a few to do most of the work."
            )
