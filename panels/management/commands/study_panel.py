import re
from decimal import Decimal

from django.core.management.base import CommandError

from annotation.models import Study
from common import commands
from common.parsing import whole_number
from panels import services
from panels.models import Provider
from panels.selectors import join_link

# Each setting by the option that sets it, so that a refusal names what to retype.
OPTION_OF = {
    "provider": "--provider",
    "id_parameter": "--id-parameter",
    "completion_url_template": "--completion-url",
    "completion_code": "--completion-code",
    "screen_out_code": "--screen-out-code",
    "failed_checks_code": "--failed-checks-code",
    "items_per_participant": "--items",
    "minutes": "--minutes",
    "places": "--places",
    "skips_per_participant": "--skips",
    "quiz": "--quiz",
    "is_open": "--open",
    "reward_minor_units": "--reward",
    "currency": "--currency",
    "prolific_study_id": "--prolific-study-id",
    "check_positions": "--checks",
}
NUMBERS = {
    "items": "items_per_participant",
    "minutes": "minutes",
    "places": "places",
    "skips": "skips_per_participant",
}
TEXTS = {
    "provider": "provider",
    "id_parameter": "id_parameter",
    "completion_url": "completion_url_template",
    "completion_code": "completion_code",
    "screen_out_code": "screen_out_code",
    "failed_checks_code": "failed_checks_code",
    "currency": "currency",
    "prolific_study_id": "prolific_study_id",
}
# A reward is typed as money ("2.50"); the panel study keeps it in minor units (250).
REWARD = re.compile(r"\d{1,4}(\.\d{1,2})?")


class Command(commands.Command):
    help = (
        "Open a study to a participant panel, or change its panel settings (only the "
        "options given change). Prints the join link to paste into the panel."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--provider", choices=Provider.values)
        parser.add_argument(
            "--id-parameter", help="generic panels: the link's parameter carrying the id"
        )
        parser.add_argument(
            "--completion-url",
            help="generic panels: where participants go back, with {code} (and {pid})",
        )
        parser.add_argument("--completion-code", help="the code of a completed batch")
        parser.add_argument("--screen-out-code", help="the code of a screened-out participant")
        parser.add_argument("--failed-checks-code", help="the code of failed attention checks")
        parser.add_argument("--items", help="items per participant")
        parser.add_argument("--minutes", help="time limit per participant (default 60)")
        parser.add_argument("--places", help="most participants at once; 0 for no limit")
        parser.add_argument(
            "--skips", help="most items a participant may skip (default 3; 0: none)"
        )
        parser.add_argument(
            "--reward", help="what the panel pays a participant who completes, e.g. 2.50"
        )
        parser.add_argument("--currency", help="the reward's currency: GBP, USD, EUR or CNY")
        parser.add_argument(
            "--prolific-study-id", help="Prolific: the study's id there, for its API"
        )
        parser.add_argument(
            "--checks",
            help="after which items an attention check is shown, e.g. 3,8 ('' for none)",
        )
        quiz = parser.add_mutually_exclusive_group()
        quiz.add_argument("--quiz", dest="quiz", action="store_true", default=None)
        quiz.add_argument(
            "--no-quiz",
            dest="quiz",
            action="store_false",
            help="participants only choose their characters (the default)",
        )
        state = parser.add_mutually_exclusive_group()
        state.add_argument("--open", dest="is_open", action="store_true", default=None)
        state.add_argument(
            "--pause", dest="is_open", action="store_false", help="take no new participants"
        )

    def handle(self, *args, study: str, **options):
        target = Study.objects.filter(slug=study).first()
        if target is None:
            raise CommandError(f"no study {study!r}")
        changes = {}
        for option, setting in TEXTS.items():
            if options[option] is not None:
                changes[setting] = options[option].strip()
        if "currency" in changes:
            changes["currency"] = changes["currency"].upper()
        for option, setting in NUMBERS.items():
            if options[option] is not None:
                number = whole_number(options[option].strip())
                if number is None:
                    raise CommandError(f"--{option}: a whole number is needed")
                changes[setting] = number
        if options["reward"] is not None:
            reward = options["reward"].strip()
            if not REWARD.fullmatch(reward):
                raise CommandError("--reward: an amount such as 2.50 is needed")
            changes["reward_minor_units"] = int(Decimal(reward) * 100)
        if options["checks"] is not None:
            raw = options["checks"].strip()
            positions = [whole_number(part.strip()) for part in raw.split(",")] if raw else []
            if None in positions:
                raise CommandError("--checks: whole numbers separated by commas are needed")
            changes["check_positions"] = positions
        for setting in ("quiz", "is_open"):
            if options[setting] is not None:
                changes[setting] = options[setting]
        try:
            panel = services.panel_configure(study=target, actor=None, **changes)
        except services.PanelError as refusal:
            option = OPTION_OF.get(refusal.code, refusal.code)
            raise CommandError(f"{option}: {refusal.message}") from None
        state = "open" if panel.is_open else "paused"
        self.stdout.write(f"{target.slug}: {panel.provider}, {state}")
        self.stdout.write(f"Join link: {join_link(panel)}")
        if "skips_per_participant" in changes:
            self.stdout.write(
                f"Skips allowed: {panel.skips_per_participant} per participant, from the next"
                " one to choose their characters (those before keep theirs)"
            )
        if panel.provider == Provider.GENERIC:
            self.stdout.write("Append the panel's placeholder for the participant id.")
        if not panel.is_open:
            # Test ids too: whoever tries the link now is turned away.
            self.stdout.write(
                f"The link turns everyone away, test ids included, until "
                f"manage.py study_panel {target.slug} --open"
            )
