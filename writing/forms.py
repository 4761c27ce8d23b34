"""The posts of the writers' and staff's writing pages, read through Django forms. Typed
text is passed to the services as it was typed: they clean it and refuse, naming the field
and the limit, what they cannot store."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from collection.models import ModelEndpoint
from collection.services import parse_scenario_numbers, scenarios_numbered
from common.forms import refused_as_invalid
from dialogues.models import Character, Scenario

from .models import FollowupMode

# What a source slug may be, as the staff page's field checks it too (`pattern`).
SOURCE_SLUG_PATTERN = r"[-a-zA-Z0-9_]{1,100}"


def _typed(**kwargs: Any) -> forms.CharField:
    return forms.CharField(required=False, strip=False, **kwargs)


def _whole(minimum: int) -> forms.IntegerField:
    return forms.IntegerField(
        min_value=minimum,
        error_messages={
            "required": _("Every number must be a whole number."),
            "invalid": _("Every number must be a whole number."),
            "min_value": _("Every number must be a whole number."),
        },
    )


class WriterApplyForm(forms.Form):
    character = forms.ModelChoiceField(
        Character.objects.all(),
        error_messages={
            "required": _("Choose a character."),
            "invalid_choice": _("Choose a character."),
        },
    )
    sample = _typed()


class AnswerForm(forms.Form):
    """A round handed in; `answer_r1` only when a returned dialogue is handed in again."""

    answer = _typed()
    answer_r1 = _typed()
    # The round the form was written for: a round-1 form left open in another tab is
    # never taken for round 2 once the user's follow-up has come.
    round = forms.TypedChoiceField(
        choices=[("1", "1"), ("2", "2")], coerce=int, required=False, empty_value=None
    )
    pastes = forms.IntegerField(required=False, min_value=0)

    def clean_pastes(self) -> int:
        # Reported by the page's script: a count, never trusted beyond a sane bound.
        return min(self.cleaned_data.get("pastes") or 0, 10_000)


class FollowupForm(forms.Form):
    question = _typed()


class RunCreateForm(forms.Form):
    name = _typed()
    source_slug = forms.RegexField(
        regex=rf"^{SOURCE_SLUG_PATTERN}$",
        error_messages={
            "required": _("The source slug may use letters, digits, - and _ only."),
            "invalid": _("The source slug may use letters, digits, - and _ only."),
        },
    )
    character = forms.ModelMultipleChoiceField(
        Character.objects.all(),
        required=False,
        error_messages={
            "invalid_choice": _("Choose known characters."),
            "invalid_pk_value": _("Choose known characters."),
        },
    )
    scenarios = forms.CharField(required=False)
    followup_mode = forms.ChoiceField(
        choices=FollowupMode.choices,
        error_messages={
            "required": _("Choose how the follow-up is written."),
            "invalid_choice": _("Choose how the follow-up is written."),
        },
    )
    simulator = forms.ModelChoiceField(ModelEndpoint.objects.all(), required=False)
    deadline = forms.DateTimeField(
        required=False,
        error_messages={"invalid": _("The deadline is not a date and time.")},
    )
    writers_per_character = _whole(0)
    lease_minutes = _whole(1)
    min_chars = _whole(0)
    max_chars = _whole(0)

    def clean_scenarios(self) -> list[Scenario]:
        # As the collection form: numbers the database does not hold are refused, named.
        numbers = refused_as_invalid(parse_scenario_numbers, self.cleaned_data["scenarios"])
        return refused_as_invalid(scenarios_numbered, numbers)

    def clean_simulator(self) -> ModelEndpoint | None:
        # A simulator is asked for only when the simulator writes the follow-up.
        if self.data.get("followup_mode") != FollowupMode.SIMULATOR:
            return None
        return self.cleaned_data["simulator"]


class ApplicationReviewForm(forms.Form):
    decision = forms.ChoiceField(
        choices=[("approve", "approve"), ("reject", "reject")],
        error_messages={
            "required": _("Choose approve or reject."),
            "invalid_choice": _("Choose approve or reject."),
        },
    )
    note = _typed()


class TaskReviewForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("accept", "accept"), ("return", "return"), ("edit", "edit")],
        error_messages={"required": _("Unknown action."), "invalid_choice": _("Unknown action.")},
    )
    note = _typed()
    answer_r1 = _typed()
    question_r2 = _typed()
    answer_r2 = _typed()
