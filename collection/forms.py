"""The posts of the collection staff pages, read through Django forms; what a form cannot
check (a key in the environment, a source held as fans') the services refuse."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from common.forms import refused_as_invalid
from dialogues.models import Character, Scenario

from . import services
from .models import ModelEndpoint


class RunStartForm(forms.Form):
    endpoint = forms.ModelChoiceField(
        ModelEndpoint.objects.all(),
        error_messages={
            "required": _("Choose an endpoint and a simulator."),
            "invalid_choice": _("Choose an endpoint and a simulator."),
        },
    )
    simulator = forms.ModelChoiceField(
        ModelEndpoint.objects.all(),
        error_messages={
            "required": _("Choose an endpoint and a simulator."),
            "invalid_choice": _("Choose an endpoint and a simulator."),
        },
    )
    characters = forms.ModelMultipleChoiceField(
        Character.objects.all(),
        error_messages={
            "required": _("Choose known characters."),
            "invalid_choice": _("Choose known characters."),
            "invalid_pk_value": _("Choose known characters."),
        },
    )
    scenarios = forms.CharField(required=False)
    rounds = forms.CharField(required=False)
    simulator_prompt = forms.CharField(required=False, strip=False)

    def clean_endpoint(self) -> ModelEndpoint:
        endpoint: ModelEndpoint = self.cleaned_data["endpoint"]
        if not endpoint.source_slug:
            raise ValidationError(_("This endpoint names no source; set its source slug first."))
        return endpoint

    def clean_scenarios(self) -> list[Scenario]:
        numbers = refused_as_invalid(
            services.parse_scenario_numbers, self.cleaned_data["scenarios"]
        )
        return refused_as_invalid(services.scenarios_numbered, numbers)

    def clean_rounds(self) -> list[int]:
        return refused_as_invalid(services.parse_rounds, self.cleaned_data["rounds"])


class RunControlForm(forms.Form):
    action = forms.CharField()


class AnswerReviewForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("accept", "accept"), ("edit", "edit"), ("regenerate", "regenerate")],
        error_messages={
            "required": _("Choose accept, edit or regenerate."),
            "invalid_choice": _("Choose accept, edit or regenerate."),
        },
    )
    text = forms.CharField(required=False, strip=False)
