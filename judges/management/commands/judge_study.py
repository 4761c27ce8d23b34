import os

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.core.validators import URLValidator
from django.db import transaction

from annotation.models import Study
from collection.models import ModelEndpoint
from common import commands
from dialogues.models import Source
from judges import services
from judges.models import JudgeRunStatus
from judges.runner import run_to_end
from judges.selectors import run_progress


class Command(commands.Command):
    help = (
        "Have an LLM judge rate a study's blinded pairs with the annotators' rubric through "
        "an OpenAI-compatible chat-completions API. Its ratings are kept apart from the "
        "human judgments. Interrupted and started again with the same options, it judges "
        "only what has no verdict yet: every item exactly once per order."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="slug of the study")
        parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
        parser.add_argument("--model", required=True)
        parser.add_argument("--api-key-env", required=True, help="variable holding the key")
        parser.add_argument("--items", type=int, help="judge only this many pairs")
        parser.add_argument(
            "--both-orders", action="store_true", help="judge each pair again, sides swapped"
        )
        parser.add_argument("--concurrency", type=int, help="calls in flight (default 4)")
        parser.add_argument("--rate", type=int, help="calls per minute (default 60)")
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int)
        parser.add_argument("--timeout", type=float, help="seconds per call (default 120)")
        parser.add_argument("--language", default="zh", help="rubric language: zh or en")
        parser.add_argument(
            "--self-source",
            help="slug of the source written by the judge's own model family (self-preference)",
        )

    def handle(self, *args, **options):
        try:
            run = self.prepare(options)
        except services.JudgeError as error:
            # A refusal the pages show is a sentence with its full stop; here a clause follows.
            message = str(error.message).rstrip(".")
            raise CommandError(f"{message}; nothing was created") from None
        progress = run_progress(run)
        orders = "each pair in both orders" if run.both_orders else "each pair once"
        self.stdout.write(
            f"Judging study {run.study.slug} with {run.model}, {orders}: "
            f"{progress.requested} verdicts wanted, {progress.rated} already there."
        )
        result = run_to_end(run)
        progress = run_progress(run)
        if progress.rated:
            # The pages show the figures as of the run's last verdict.
            services.run_figures_refresh(run=run)
        if result.status == JudgeRunStatus.FAILED:
            raise CommandError(
                f"stopped on a permanent error: {result.error}\n"
                f"{progress.rated} verdicts are kept; fix the cause and run the same command again."
            )
        if result.status in (JudgeRunStatus.PAUSED, JudgeRunStatus.CANCELLED):
            raise CommandError(
                f"the run was {result.status} on the judges' page; {progress.rated} verdicts "
                "are kept. Run the same command again to continue it."
            )
        if result.status != JudgeRunStatus.FINISHED:
            last = progress.failures[0] if progress.failures else "none"
            raise CommandError(
                f"{progress.missing} of {progress.requested} verdicts are still missing after "
                f"retries ({progress.failed} recorded as failures; last: {last}); run the same "
                "command again to judge them"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Judge run #{run.pk}: {progress.rated} verdicts. "
                f"Tokens: {progress.tokens_in} in, {progress.tokens_out} out."
            )
        )

    def prepare(self, options):
        """Check everything, then create or update the endpoint and the run in one go."""
        study = Study.objects.filter(slug=options["study"]).first()
        if study is None:
            raise services.JudgeError("no_study", f"there is no study {options['study']!r}")
        try:
            URLValidator(schemes=["http", "https"])(options["base_url"])
        except ValidationError:
            raise services.JudgeError(
                "bad_url", f"--base-url {options['base_url']!r} is not an http(s) URL"
            ) from None
        if not os.environ.get(options["api_key_env"], "").strip():
            raise services.JudgeError(
                "missing_key",
                f"the environment variable {options['api_key_env']} (--api-key-env) is not set",
            )
        for flag in ("items", "concurrency", "rate", "max_tokens"):
            if options[flag] is not None and options[flag] < 1:
                raise services.JudgeError(
                    "bad_limit", f"--{flag.replace('_', '-')} must be at least 1"
                )
        if options["timeout"] is not None and not options["timeout"] > 0:
            raise services.JudgeError("bad_limit", "--timeout must be more than 0 seconds")
        if not 0 <= options["temperature"] <= 2:
            raise services.JudgeError("bad_temperature", "--temperature must be in 0..2")
        self_source = None
        if options["self_source"]:
            self_source = Source.objects.filter(slug=options["self_source"]).first()
            if self_source is None:
                raise services.JudgeError(
                    "no_source", f"there is no source {options['self_source']!r}"
                )
        settings = {
            "source_slug": "",
            "base_url": options["base_url"],
            "model": options["model"],
            "api_key_env": options["api_key_env"],
            "api_key_file": "",
            "temperature": options["temperature"],
        }
        for flag, field in (
            ("concurrency", "concurrency"),
            ("rate", "rate_per_minute"),
            ("max_tokens", "max_tokens"),
            ("timeout", "timeout_seconds"),
        ):
            if options[flag] is not None:
                settings[field] = options[flag]
        with transaction.atomic():
            endpoint, _ = ModelEndpoint.objects.update_or_create(
                name=f"judge {options['model']} @ {options['base_url']}"[:200], defaults=settings
            )
            return services.run_start(
                study=study,
                endpoint=endpoint,
                language=options["language"],
                both_orders=options["both_orders"],
                items=options["items"],
                self_source=self_source,
            )
