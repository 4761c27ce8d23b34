"""A study's panel settings: validated as a whole, written in one transaction, audited."""

import re
import string
from urllib.parse import urlsplit

from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import AuditAction, Study
from annotation.services import audit

from .. import checks
from ..models import PROLIFIC_COMPLETION_URL, PROLIFIC_ID_PARAMETER, PanelStudy, Provider
from .errors import PanelError

SETTINGS = (
    "provider",
    "id_parameter",
    "completion_url_template",
    "completion_code",
    "screen_out_code",
    "failed_checks_code",
    "items_per_participant",
    "minutes",
    "places",
    "skips_per_participant",
    "quiz",
    "is_open",
    "reward_minor_units",
    "currency",
    "prolific_study_id",
    "check_positions",
)
# What a new panel study gets when a setting is not given; the rest must be given.
DEFAULTS = {
    "failed_checks_code": "",
    "minutes": 60,
    "places": 0,
    "skips_per_participant": 3,
    "quiz": False,
    "is_open": False,
    "reward_minor_units": 0,
    "currency": "GBP",
    "prolific_study_id": "",
    "check_positions": [],
}
# Currencies the panels in use pay in (Prolific: GBP and USD; Credamo and WJX: CNY), each
# with two decimal places, so that a reward in minor units reads as money everywhere.
CURRENCIES = ("GBP", "USD", "EUR", "CNY")
REQUIRED = ("provider", "completion_code", "screen_out_code", "items_per_participant")

# Codes and ids travel in URLs and are typed by people on the panel's side: a short,
# unambiguous alphabet keeps them the same wherever they are pasted.
TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
PARAMETER = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
TEMPLATE_MAX_CHARS = 500
MOST_MINUTES = 24 * 60


def _refuse(setting: str, message: str):
    raise PanelError(setting, message)


def _code(value, setting: str, name: str, *, optional=False) -> str:
    if optional and value == "":
        return ""
    if not isinstance(value, str) or not TOKEN.fullmatch(value):
        _refuse(
            setting,
            _("The %(name)s must be 1 to 64 letters, digits, _ or -.") % {"name": name},
        )
    return value


def _whole(value, setting: str, name: str, *, least: int, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        _refuse(
            setting,
            _("The %(name)s must be a whole number of %(least)d or more.")
            % {"name": name, "least": least},
        )
    if most is not None and value > most:
        _refuse(
            setting,
            _("The %(name)s must be at most %(most)d.") % {"name": name, "most": most},
        )
    return value


def _flag(value, setting: str) -> bool:
    if not isinstance(value, bool):
        _refuse(setting, _("The setting %(name)s is yes or no.") % {"name": setting})
    return value


def _currency(value) -> str:
    if value not in CURRENCIES:
        _refuse(
            "currency",
            _("The currency must be one of %(currencies)s.")
            % {"currencies": ", ".join(CURRENCIES)},
        )
    return value


def _positions(value, items: int) -> list[int]:
    """After which items attention checks come: distinct whole numbers from 1 to the
    batch's size, smallest first, no more than the bank has checks (nobody sees a check
    twice)."""
    setting = "check_positions"
    if not isinstance(value, list | tuple) or any(
        isinstance(position, bool) or not isinstance(position, int) for position in value
    ):
        _refuse(
            setting,
            _("The attention checks are given as whole numbers of items, such as 3, 8."),
        )
    positions = list(value)
    if any(not 1 <= position <= items for position in positions):
        _refuse(
            setting,
            _("Each attention check comes after 1 to %(items)d items (the items per participant).")
            % {"items": items},
        )
    if len(set(positions)) != len(positions):
        _refuse(setting, _("Each attention check needs its own place; a number is repeated."))
    if positions != sorted(positions):
        _refuse(setting, _("List the attention checks in order, smallest first."))
    if len(positions) > len(checks.BANK):
        _refuse(
            setting,
            _("At most %(most)d attention checks: nobody is shown the same check twice.")
            % {"most": len(checks.BANK)},
        )
    return positions


def completion_template_check(template) -> str:
    """A completion URL template: http(s), with {code} and at most {pid} as placeholders."""
    if not isinstance(template, str) or not 0 < len(template) <= TEMPLATE_MAX_CHARS:
        _refuse("completion_url_template", _("The completion URL must be 1 to 500 characters."))
    try:
        fields = [
            (name, spec, conversion)
            for _text, name, spec, conversion in string.Formatter().parse(template)
            if name is not None
        ]
    except ValueError:
        fields = [("", "", None)]
    if any(name not in ("code", "pid") or spec or conversion for name, spec, conversion in fields):
        _refuse(
            "completion_url_template",
            _("The completion URL may contain only {code} and {pid} in braces."),
        )
    if "code" not in {name for name, _spec, _conversion in fields}:
        _refuse("completion_url_template", _("The completion URL must contain {code}."))
    filled = template.format(code="CODE", pid="PID")
    parts = urlsplit(filled)
    if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r"\s", filled):
        _refuse(
            "completion_url_template",
            _("The completion URL must be an http or https address without spaces."),
        )
    return template


def settings_check(current: dict, changes: dict) -> dict:
    """Every setting of a panel study, `changes` applied to `current` (empty for a new
    one) and checked; refuses with the first setting that is wrong."""
    unknown = sorted(set(changes) - set(SETTINGS))
    if unknown:
        _refuse(unknown[0], _("There is no panel setting %(name)s.") % {"name": unknown[0]})
    merged = {**(DEFAULTS if not current else {}), **current, **changes}
    for setting in REQUIRED:
        if merged.get(setting) in (None, ""):
            _refuse(setting, _("The setting %(name)s is required.") % {"name": setting})
    provider = merged["provider"]
    if provider not in Provider.values:
        _refuse("provider", _("The panel must be prolific or generic."))
    switched = current.get("provider") != provider
    if provider == Provider.PROLIFIC:
        # Prolific's link and completion page are fixed; staff need not type them.
        if switched or not merged.get("id_parameter"):
            merged["id_parameter"] = changes.get("id_parameter") or PROLIFIC_ID_PARAMETER
        if switched or not merged.get("completion_url_template"):
            merged["completion_url_template"] = (
                changes.get("completion_url_template") or PROLIFIC_COMPLETION_URL
            )
        if merged["id_parameter"] != PROLIFIC_ID_PARAMETER:
            _refuse("id_parameter", _("Prolific sends the participant's id as PROLIFIC_PID."))
    elif switched:
        # Another panel's names cannot be guessed: both are asked for when it is chosen.
        for setting in ("id_parameter", "completion_url_template"):
            if not changes.get(setting):
                _refuse(
                    setting,
                    _("A generic panel needs the setting %(name)s.") % {"name": setting},
                )
    if not isinstance(merged["id_parameter"], str) or not PARAMETER.fullmatch(
        merged["id_parameter"]
    ):
        _refuse(
            "id_parameter",
            _("The id parameter must be a letter then up to 63 letters, digits, _, . or -."),
        )
    checked = {
        "provider": provider,
        "id_parameter": merged["id_parameter"],
        "completion_url_template": completion_template_check(merged["completion_url_template"]),
        "completion_code": _code(
            merged["completion_code"], "completion_code", _("completion code")
        ),
        "screen_out_code": _code(
            merged["screen_out_code"], "screen_out_code", _("screen-out code")
        ),
        "failed_checks_code": _code(
            merged["failed_checks_code"],
            "failed_checks_code",
            _("failed-checks code"),
            optional=True,
        ),
        "items_per_participant": _whole(
            merged["items_per_participant"],
            "items_per_participant",
            _("items per participant"),
            least=1,
            most=10_000,
        ),
        "minutes": _whole(
            merged["minutes"], "minutes", _("time limit in minutes"), least=1, most=MOST_MINUTES
        ),
        "places": _whole(merged["places"], "places", _("number of places"), least=0),
        "quiz": _flag(merged["quiz"], "quiz"),
        "is_open": _flag(merged["is_open"], "is_open"),
        "reward_minor_units": _whole(
            merged["reward_minor_units"],
            "reward_minor_units",
            _("reward per participant"),
            least=0,
            most=100_000,
        ),
        "currency": _currency(merged["currency"]),
        "prolific_study_id": _code(
            merged["prolific_study_id"],
            "prolific_study_id",
            _("Prolific study id"),
            optional=True,
        ),
    }
    checked["skips_per_participant"] = _whole(
        merged["skips_per_participant"],
        "skips_per_participant",
        _("number of skips per participant"),
        least=0,
        most=10_000,
    )
    checked["check_positions"] = _positions(
        merged["check_positions"], checked["items_per_participant"]
    )
    codes = [checked["completion_code"], checked["screen_out_code"]]
    codes += [checked["failed_checks_code"]] if checked["failed_checks_code"] else []
    if len(set(codes)) != len(codes):
        # The panel tells outcomes apart by the code alone.
        _refuse("screen_out_code", _("Each outcome needs its own code."))
    if checked["check_positions"] and not checked["failed_checks_code"]:
        # Those who fail must be told so by a code of its own, for the panel to act on.
        _refuse(
            "failed_checks_code",
            _("Attention checks need a failed-checks code: give one, or remove the checks."),
        )
    return checked


@transaction.atomic
def panel_configure(*, study: Study, actor, **settings) -> PanelStudy:
    """Create or change a study's panel settings; only the settings given change."""
    panel = PanelStudy.objects.select_for_update().filter(study=study).first()
    current = {name: getattr(panel, name) for name in SETTINGS} if panel else {}
    wanted = settings_check(current, settings)
    before, after = audit.changes(current, wanted)
    if panel is None:
        panel = PanelStudy.objects.create(study=study, **wanted)
    elif after:
        for name, value in after.items():
            setattr(panel, name, value)
        panel.save()
    if after:
        audit.record(
            actor=actor,
            action=AuditAction.PANEL_SETTINGS,
            target=panel,
            target_label=study.slug,
            study=study,
            before=before,
            after=after,
        )
    return panel
