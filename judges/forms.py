"""The post of the judges' staff page, read through a Django form; what a form cannot
check (a key in the environment, a study without pairs) the services refuse."""

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import Study
from collection.models import ModelEndpoint
from dialogues.models import Source, SourceKind

from .models import PromptLanguage


class JudgeRunStartForm(forms.Form):
    study = forms.ModelChoiceField(
        Study.objects.all(),
        error_messages={
            "required": _("Choose a study."),
            "invalid_choice": _("Choose a study."),
        },
    )
    endpoint = forms.ModelChoiceField(
        ModelEndpoint.objects.all(),
        error_messages={
            "required": _("Choose the judge's endpoint."),
            "invalid_choice": _("Choose the judge's endpoint."),
        },
    )
    language = forms.ChoiceField(
        choices=PromptLanguage.choices,
        error_messages={"invalid_choice": _("Choose the rubric's language: zh or en.")},
    )
    items = forms.IntegerField(
        required=False,
        min_value=1,
        error_messages={
            "invalid": _("The number of pairs is a whole number of at least 1."),
            "min_value": _("The number of pairs is a whole number of at least 1."),
        },
    )
    both_orders = forms.BooleanField(required=False)
    # Self-preference is a model's bias towards answers its own family wrote: only an LLM
    # source can be that family.
    self_source = forms.ModelChoiceField(
        Source.objects.filter(kind=SourceKind.LLM),
        required=False,
        error_messages={"invalid_choice": _("Choose one of the LLM sources, or none.")},
    )
