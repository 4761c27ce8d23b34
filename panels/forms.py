"""The admin's form of a study's panel settings: the service's own check decides, so the
admin, the command and any staff page accept and refuse exactly the same settings."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from dialogues.models import Character

from . import services
from .models import PanelStudy


class PanelStudyForm(forms.ModelForm):
    class Meta:
        model = PanelStudy
        fields = ["study", *services.SETTINGS]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        current = (
            {name: getattr(self.instance, name) for name in services.SETTINGS}
            if self.instance.pk
            else {}
        )
        wanted = {name: cleaned.get(name) for name in services.SETTINGS if name in cleaned}
        # A blank optional code arrives as "", the service's "not given" for a new study.
        try:
            cleaned.update(services.settings_check(current, wanted))
        except services.PanelError as refusal:
            field = refusal.code if refusal.code in self.fields else None
            self.add_error(field, refusal.message)
        return cleaned


class ConsentForm(forms.Form):
    agree = forms.BooleanField(
        required=True,
        error_messages={
            "required": _("Please tick the box to give your consent, or leave this page.")
        },
    )


class CharactersForm(forms.Form):
    characters = forms.ModelMultipleChoiceField(
        queryset=Character.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Characters: choose at least one character you know."),
            "invalid_choice": _("Characters: choose characters of this study only."),
            "invalid_pk_value": _("Characters: choose characters of this study only."),
        },
    )

    def __init__(self, *args: Any, study: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["characters"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = study.characters.order_by("pk")


class LeaveForm(forms.Form):
    confirm = forms.BooleanField(
        required=True,
        error_messages={
            "required": _("Press “Yes, leave this study” to leave, or go back to your items.")
        },
    )
