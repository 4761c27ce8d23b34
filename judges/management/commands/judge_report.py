import json

from django.core.management.base import CommandError

from annotation.models import Study
from common import commands
from judges import services
from judges.methods import LANGUAGES, judge_methods_text
from judges.selectors import runs_of_study
from judges.stats.boards import rests_on_few_values


class Command(commands.Command):
    help = (
        "Recompute, store and print the figures of a study's judge runs beside its human "
        "raters: agreement, position, length and self-preference biases, leaderboards and "
        "the headline."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="slug of the study")
        parser.add_argument("--run", type=int, help="one judge run (default: every run)")
        parser.add_argument("--json", action="store_true", help="one JSON object")
        parser.add_argument(
            "--methods", choices=LANGUAGES, help="print each run's methods paragraph in zh or en"
        )

    def handle(self, *args, **options):
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"there is no study {options['study']!r}")
        runs = runs_of_study(study)
        if options["run"] is not None:
            runs = [r for r in runs if r.pk == options["run"]]
            if not runs:
                raise CommandError(f"study {study.slug} has no judge run {options['run']}")
        if not runs:
            raise CommandError(f"study {study.slug} has no judge runs; run judge_study first")
        reports = [services.run_figures_refresh(run=run) for run in runs]
        if options["methods"]:
            for report in reports:
                self.stdout.write(judge_methods_text(report, options["methods"]) + "\n")
            return
        if options["json"]:
            self.stdout.write(json.dumps({"study": study.slug, "judges": reports}, indent=1))
            return
        for report in reports:
            self.stdout.write(self.summary(report))

    def summary(self, report: dict) -> str:
        figures = report["figures"]
        biases = figures["biases"]

        def rate(figure, key="rate"):
            if figure.get(key) is None:
                return "not enough data"
            interval = (
                f" [{two(figure['ci_low'])}, {two(figure['ci_high'])}]"
                if figure.get("ci_low") is not None
                else " (no interval: not enough data)"
            )
            return f"{two(figure[key])}{interval} (n={figure['n']})"

        lines = [
            f"Judge run #{report['run']}: {report['model']} on {report['study']} "
            f"({report['calls']['rated']} verdicts, {report['calls']['failed']} failed; "
            f"{figures['human_judgments']} human judgments)",
            f"  left side preferred: judge {rate(biases['position']['judge'])}; "
            f"humans {rate(biases['position']['humans'])}",
            f"  same side won in both orders: "
            f"{rate(biases['position']['judge_same_side_both_orders'])}",
            f"  longer answer preferred: judge {rate(biases['length']['judge_longer_preferred'])}; "
            f"humans {rate(biases['length']['humans_longer_preferred'])}",
            f"  score per 100 characters: judge {rate(biases['length']['judge_slope'], 'slope')}; "
            f"humans {rate(biases['length']['humans_slope'], 'slope')}",
        ]
        own = biases["self_preference"]
        if "judge" in own:
            lines.append(
                f"  own family ({own['source']}) preferred: judge {rate(own['judge'])}; "
                f"humans {rate(own['humans'])}"
            )
        board = figures["leaderboard"]
        if board.get("rank_correlation"):
            rank = board["rank_correlation"]
            sources = rank.get("sources", board.get("sources"))
            if rests_on_few_values(rank, sources):
                interval = f" (no interval: {sources} sources, too few values)"
            elif rank["ci_low"] is not None:
                interval = f" [{two(rank['ci_low'])}, {two(rank['ci_high'])}]"
            else:
                interval = ""
            lines.append(
                f"  rank correlation with the humans' leaderboard: {two(rank['spearman'])}"
                + interval
            )
        headline = figures["headline"]
        if headline.get("holds") is not None:
            lines.append(
                f"  headline verdicts agreeing: {headline['verdicts_agreeing']} of "
                f"{headline['verdicts_compared']}"
            )
        if figures["note"]:
            lines.append(f"  humans: {figures['note']}")
        return "\n".join(lines) + "\n"


def two(value: float) -> str:
    """Two decimals; a figure just below zero reads "0.00", not "-0.00"."""
    return f"{round(value, 2) or 0.0:.2f}"
