"""The admin's form of a study's panel settings: the service's own check decides, so the
admin, the command and any staff page accept and refuse exactly the same settings."""

from typing import Any

from django import forms

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
