"""The admin's form of a study's panel settings: the service's own check decides, so the
admin, the command and any staff page accept and refuse exactly the same settings."""

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from common.parsing import whole_number
from dialogues.models import Character

from . import checks, services
from .models import PanelStudy, Participant, ParticipantState

# Settings the admin's form may leave empty: the service's defaults apply.
OPTIONAL = ("reward_minor_units", "currency")


class PositionsField(forms.CharField):
    """Item counts typed as "3, 8" (the list the service checks); empty for none."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return ", ".join(str(position) for position in value)
        return value

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value) or ""
        if not text.strip():
            return []
        positions = [whole_number(part.strip()) for part in text.split(",")]
        if None in positions:
            raise forms.ValidationError(
                _("Attention checks: whole numbers separated by commas, such as 3, 8.")
            )
        return positions


class PanelStudyForm(forms.ModelForm):
    check_positions = PositionsField(
        label=_("Attention checks after items"),
        required=False,
        help_text=_(
            "After which items a participant answers an attention check, such as 3, 8; "
            "empty for none. Checks need a failed-checks code."
        ),
    )

    class Meta:
        model = PanelStudy
        fields = ["study", *services.SETTINGS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in OPTIONAL:
            self.fields[name].required = False
        # Stored in the currency's smallest unit; a whole number typed as pounds would be
        # pence, and the dashboard's hourly pay a hundredth of the truth.
        self.fields["reward_minor_units"].label = _("Reward per participant, in pence or cents")
        self.fields["reward_minor_units"].help_text = _(
            "The smallest unit of the currency below: 150 is 1.50 (pounds, dollars or yuan)."
        )

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
        # Left empty, the reward and currency keep what they are (or their defaults).
        for name in OPTIONAL:
            if wanted.get(name) in (None, ""):
                wanted.pop(name, None)
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

    def __init__(self, *args: Any, study: Any, offered: Any = None, **kwargs: Any) -> None:
        """`offered`: the characters to choose from, if not all the study's (a quiz study
        offers those with a quiz)."""
        super().__init__(*args, **kwargs)
        field = self.fields["characters"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = offered if offered is not None else study.characters.order_by("pk")


class QuizForm(forms.Form):
    """One character's quiz: the character (the service decides whether it is theirs to
    take) and one choice per question shown."""

    character = forms.ModelChoiceField(
        queryset=Character.objects.all(),
        widget=forms.HiddenInput,
        error_messages={
            "required": _("Quiz: the quiz's character is missing; reload the page."),
            "invalid_choice": _("Quiz: the quiz's character is missing; reload the page."),
        },
    )

    def __init__(self, data: Any, *, character: Any, questions: list) -> None:
        super().__init__(data, initial={"character": character})
        self.questions = questions
        for question in questions:
            self.fields[f"q{question.pk}"] = forms.TypedChoiceField(
                choices=[
                    (str(index), label) for index, label in enumerate(question.choice_labels())
                ],
                coerce=int,
                error_messages={
                    "required": _("Quiz: please answer every question."),
                    "invalid_choice": _("Quiz: please answer every question."),
                },
            )

    def rows(self) -> list[tuple[int, str, str, list[tuple[str, str, bool]]]]:
        """Each question as the page shows it: number, field name, prompt, and its
        choices (value, label, whether it was chosen in the post being shown again)."""
        shown = []
        for number, question in enumerate(self.questions, start=1):
            name = f"q{question.pk}"
            chosen = self.data.get(name) if self.is_bound else None
            choices = [
                (str(index), label, chosen == str(index))
                for index, label in enumerate(question.choice_labels())
            ]
            shown.append((number, name, question.prompt, choices))
        return shown

    def choices(self) -> dict[int, int]:
        """Question id to the index chosen (a validated form)."""
        return {question.pk: self.cleaned_data[f"q{question.pk}"] for question in self.questions}


class CheckVoidForm(forms.Form):
    """Staff set aside a check they find unclear (the service checks the key again)."""

    check = forms.ChoiceField(label=_("Attention check"), choices=[])
    reason = forms.CharField(
        label=_("Why it is unclear (kept in the audit trail)"),
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        error_messages={"required": _("Please say why the check is unclear.")},
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Each check as the reader's language words it, so staff see what participants saw.
        language = get_language() or ""
        field = self.fields["check"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (check.key, f"{check.key}: {check.prompt(language)}") for check in checks.BANK
        ]


# One message for every malformed field of the check's form: they are hidden fields the
# page fills in, so only a forged or broken post gets it.
_NOT_RECORDED = _("Please choose one of the answers shown. Nothing was recorded.")


class CheckAnswerForm(forms.Form):
    position = forms.IntegerField(min_value=1, max_value=10_000)
    check = forms.CharField(max_length=40)
    choice = forms.CharField(max_length=40)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.error_messages = {key: _NOT_RECORDED for key in field.error_messages}


# --- The staff dashboard's decisions ------------------------------------------------------


class ParticipantsField(forms.ModelMultipleChoiceField):
    """Participants of one panel study, chosen by their checkboxes."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            queryset=Participant.objects.none(),
            error_messages={
                "required": _("Choose at least one participant."),
                "invalid_choice": _("Choose participants of this study only."),
                "invalid_pk_value": _("Choose participants of this study only."),
            },
            **kwargs,
        )


class ApproveForm(forms.Form):
    participants = ParticipantsField()

    def __init__(self, *args: Any, panel: PanelStudy, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["participants"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = panel.participants.all()


# Prolific's rejection categories in words (its own app's wording), for the staff form.
REJECTION_CATEGORY_NAMES = {
    "TOO_QUICKLY": _("Too quick"),
    "TOO_SLOWLY": _("Too slow"),
    "FAILED_INSTRUCTIONS": _("Did not follow the instructions"),
    "INCOMP_LONGITUDINAL": _("Did not take part in every part of the study"),
    "FAILED_CHECK": _("Failed attention checks"),
    "LOW_EFFORT": _("Low effort"),
    "MALINGERING": _("Answers not given in good faith"),
    "NO_CODE": _("No completion code"),
    "BAD_CODE": _("Wrong completion code"),
    "NO_DATA": _("No data"),
    "UNSUPP_DEVICE": _("Unsupported device"),
}


class Verdict:
    REJECT, RETURN, BONUS = "reject", "return", "bonus"


class ParticipantField(forms.ModelChoiceField):
    """A participant of one panel study, named by their pseudonym (never their panel id)."""

    def label_from_instance(self, obj: Any) -> str:
        return obj.user.annotator_profile.pseudonym


class DecisionForm(forms.Form):
    """One participant's rejection, request to return, or bonus. The reason (and on
    Prolific the category and its length) and the amount are the service's to check."""

    participant = ParticipantField(
        queryset=Participant.objects.none(),
        error_messages={
            "required": _("Choose a participant."),
            "invalid_choice": _("Choose a participant of this study."),
        },
    )
    verdict = forms.ChoiceField(
        choices=[
            ("", _("Choose…")),
            (Verdict.REJECT, _("Reject")),
            (Verdict.RETURN, _("Ask to return")),
            (Verdict.BONUS, _("Pay a bonus")),
        ],
        error_messages={
            "required": _("Choose what to do."),
            "invalid_choice": _("Choose what to do."),
        },
    )
    reason = forms.CharField(required=False, strip=True, max_length=2000)
    category = forms.ChoiceField(required=False, choices=[("", "")])
    bonus = forms.DecimalField(
        required=False,
        min_value=Decimal("0.01"),
        max_digits=7,
        decimal_places=2,
        error_messages={
            "invalid": _("Bonus: an amount such as 0.50."),
            "min_value": _("Bonus: an amount such as 0.50."),
            "max_digits": _("Bonus: an amount such as 0.50."),
            "max_decimal_places": _("Bonus: an amount such as 0.50."),
        },
    )

    def __init__(self, *args: Any, panel: PanelStudy, categories: tuple[str, ...], **kwargs: Any):
        super().__init__(*args, **kwargs)
        field = self.fields["participant"]
        assert isinstance(field, forms.ModelChoiceField)
        # Only a finished batch has a submission to decide on.
        field.queryset = panel.participants.exclude(state=ParticipantState.STARTED).select_related(
            "user__annotator_profile"
        )
        field.empty_label = _("Choose…")
        category = self.fields["category"]
        assert isinstance(category, forms.ChoiceField)
        category.choices = [("", _("Other"))] + [
            (name, str(REJECTION_CATEGORY_NAMES.get(name, name)))
            for name in categories
            if name != "OTHER"
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("verdict") == Verdict.BONUS and cleaned.get("bonus") is None:
            self.add_error("bonus", _("Bonus: an amount such as 0.50."))
        return cleaned

    def bonus_minor_units(self) -> int:
        return int(self.cleaned_data["bonus"] * 100)


class PlacesForm(forms.Form):
    places = forms.IntegerField(
        min_value=0,
        max_value=1_000_000,
        error_messages={
            "required": _("Places: a whole number of 0 or more."),
            "invalid": _("Places: a whole number of 0 or more."),
            "min_value": _("Places: a whole number of 0 or more."),
            "max_value": _("Places: a whole number of 0 or more."),
        },
    )


class OpennessForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("pause", "pause"), ("resume", "resume")],
        error_messages={"required": _("Pause or resume?"), "invalid_choice": _("Pause or resume?")},
    )


class LeaveForm(forms.Form):
    confirm = forms.BooleanField(
        required=True,
        error_messages={
            "required": _("Press “Yes, leave this study” to leave, or go back to your items.")
        },
    )
