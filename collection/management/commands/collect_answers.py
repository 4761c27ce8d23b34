import os
import sys
import time

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.core.validators import URLValidator
from django.db import transaction

from collection import services
from collection.models import ModelEndpoint, RunStatus
from collection.runner import run_to_end
from collection.selectors import run_progress
from common import commands
from dialogues.chatanime_format import SLUG_LENGTH, SOURCE_SLUG

BAR_WIDTH = 30
# The bar is redrawn at most this often: each redraw reads the run's progress.
REDRAW_SECONDS = 0.5


class Command(commands.Command):
    help = (
        "Collect a source's answers from an OpenAI-compatible chat-completions API: round 1, "
        "a simulated user's follow-up, round 2. Continues the source's unfinished run; "
        "interrupted and started again, it collects only what is missing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--source", required=True, help="slug of the answer source")
        parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
        parser.add_argument("--model", required=True)
        parser.add_argument("--api-key-env", required=True, help="variable holding the key")
        parser.add_argument("--simulator-base-url", required=True)
        parser.add_argument("--simulator-model", required=True)
        parser.add_argument("--simulator-api-key-env", required=True)
        parser.add_argument("--characters", help="comma-separated keys or names; default all")
        parser.add_argument(
            "--scenarios", help="numbers such as 1-15 or 1,5,9-12; default all in the database"
        )
        parser.add_argument("--rounds", default="1,2")
        parser.add_argument(
            "--concurrency", type=int, help="calls in flight, per endpoint (default 4)"
        )
        parser.add_argument("--rate", type=int, help="calls per minute, per endpoint (default 60)")
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--max-tokens", type=int)

    def handle(self, *args, **options):
        try:
            run = self.prepare(options)
        except services.CollectionError as error:
            # A refusal the pages show is a sentence with its full stop; here a clause follows.
            message = str(error.message).rstrip(".")
            raise CommandError(f"{message}; nothing was created") from None
        progress = run_progress(run)
        self.stdout.write(
            f"Collecting {progress.requested} answers for source {run.source.slug} "
            f"({progress.done} already there) with {run.endpoint.concurrency} concurrent calls."
        )
        self.draw(run)
        result = run_to_end(run, on_cell=lambda outcome: self.draw(run))
        self.draw(run, final=True)
        progress = run_progress(run)
        if result.status == RunStatus.FAILED:
            raise CommandError(
                f"stopped on a permanent error: {result.error}\n"
                f"{progress.done} answers are kept; fix the cause and run the same command again."
            )
        if result.status in (RunStatus.PAUSED, RunStatus.CANCELLED):
            raise CommandError(
                f"the run was {result.status} by staff; {progress.done} answers kept"
            )
        if result.status != RunStatus.FINISHED:
            raise CommandError(
                f"{progress.pending + progress.failed} answers are still missing after retries "
                f"(last error: {progress.failures[0].error if progress.failures else 'none'}); "
                "run the same command again to fill the gaps"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Every requested answer exists: {progress.accepted} accepted, "
                f"{progress.flagged} flagged for review. Tokens: {progress.tokens_in} in, "
                f"{progress.tokens_out} out."
            )
        )

    def prepare(self, options):
        """Validate everything, then create or update endpoints and the run in one go."""
        slug = options["source"].strip()
        if not SOURCE_SLUG.match(slug) or len(slug) > SLUG_LENGTH:
            raise services.CollectionError(
                "bad_source", f"{slug!r} is not a usable source slug (letters, digits, . _ -)"
            )
        for flag in ("base_url", "simulator_base_url"):
            try:
                URLValidator(schemes=["http", "https"])(options[flag])
            except ValidationError:
                raise services.CollectionError(
                    "bad_url", f"--{flag.replace('_', '-')} {options[flag]!r} is not an http(s) URL"
                ) from None
        for flag in ("api_key_env", "simulator_api_key_env"):
            if not os.environ.get(options[flag], "").strip():
                raise services.CollectionError(
                    "missing_key",
                    f"the environment variable {options[flag]} (--{flag.replace('_', '-')}) "
                    "is not set",
                )
        for flag, low in (("concurrency", 1), ("rate", 1), ("max_tokens", 1)):
            if options[flag] is not None and options[flag] < low:
                raise services.CollectionError("bad_limit", f"--{flag} must be at least {low}")
        if options["temperature"] is not None and not 0 <= options["temperature"] <= 2:
            raise services.CollectionError("bad_temperature", "--temperature must be in 0..2")
        names = [n for n in (options["characters"] or "").split(",") if n.strip()]
        characters = services.characters_named(names or None)
        scenarios = services.scenarios_numbered(
            services.parse_scenario_numbers(options["scenarios"]) if options["scenarios"] else None
        )
        rounds = services.parse_rounds(options["rounds"])

        responder_settings = {
            "source_slug": slug,
            "base_url": options["base_url"],
            "model": options["model"],
            "api_key_env": options["api_key_env"],
            "api_key_file": "",
        }
        for flag, field in (
            ("concurrency", "concurrency"),
            ("rate", "rate_per_minute"),
            ("temperature", "temperature"),
            ("max_tokens", "max_tokens"),
        ):
            if options[flag] is not None:
                responder_settings[field] = options[flag]
        with transaction.atomic():
            endpoint, _ = ModelEndpoint.objects.update_or_create(
                name=slug, defaults=responder_settings
            )
            simulator, _ = ModelEndpoint.objects.update_or_create(
                name=f"simulator {options['simulator_model']} @ {options['simulator_base_url']}"[
                    :200
                ],
                defaults={
                    "base_url": options["simulator_base_url"],
                    "model": options["simulator_model"],
                    "api_key_env": options["simulator_api_key_env"],
                    "api_key_file": "",
                    # The simulator is called once per dialogue, between the two rounds:
                    # the same limits keep it from becoming the bottleneck.
                    **{
                        field: responder_settings[field]
                        for field in ("concurrency", "rate_per_minute")
                        if field in responder_settings
                    },
                },
            )
            return services.run_start(
                source_slug=slug,
                endpoint=endpoint,
                simulator_endpoint=simulator,
                characters=characters,
                scenarios=scenarios,
                rounds=rounds,
            )

    def draw(self, run, final=False):
        now = time.monotonic()
        if not final and now - getattr(self, "drawn_at", 0) < REDRAW_SECONDS:
            return
        self.drawn_at = now
        progress = run_progress(run)
        filled = int(BAR_WIDTH * progress.done / progress.requested) if progress.requested else 0
        line = (
            f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {progress.done}/{progress.requested}"
            f"  flagged {progress.flagged}  failed {progress.failed}"
        )
        if progress.eta_seconds is not None and not final:
            line += f"  eta {progress.eta_seconds // 60}m{progress.eta_seconds % 60:02d}s"
        self.stdout.write(line.ljust(90), ending="\n" if final else "")
        self.stdout.flush()
        sys.stdout.flush()
