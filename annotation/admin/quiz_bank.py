"""The screening quiz bank: questions whose choices are edited as fields, not JSON."""

from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from ..models import ScreeningQuestion

CHOICE_SLOTS = 6


class _ScreeningQuestionFormBase(forms.ModelForm):
    """The choices as one Chinese and one English field each, and the right one picked
    from a list, instead of hand-edited JSON."""

    correct_choice = forms.TypedChoiceField(
        label=_("right choice"),
        coerce=int,
        choices=[(i, _("Choice %(n)d") % {"n": i + 1}) for i in range(CHOICE_SLOTS)],
    )

    class Meta:
        model = ScreeningQuestion
        fields = ["character", "prompt_zh", "prompt_en", "correct_choice", "active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        stored = list(self.instance.choices or []) if self.instance.pk else []
        for i in range(CHOICE_SLOTS):
            choice = stored[i] if i < len(stored) else {}
            for language, label in (("zh", _("Chinese")), ("en", _("English"))):
                name = f"choice_{i}_{language}"
                self.fields[name].label = _("Choice %(n)d (%(language)s)") % {
                    "n": i + 1,
                    "language": label,
                }
                self.initial.setdefault(name, choice.get(language, ""))

    def clean(self):
        cleaned = super().clean()
        choices = []
        for i in range(CHOICE_SLOTS):
            zh = cleaned.get(f"choice_{i}_zh", "").strip()
            en = cleaned.get(f"choice_{i}_en", "").strip()
            if en and not zh:
                self.add_error(f"choice_{i}_zh", _("A choice needs its Chinese text."))
            if zh:
                if choices and len(choices) != i:
                    self.add_error(f"choice_{i}_zh", _("Fill the choices in order, without gaps."))
                choices.append({"zh": zh, "en": en})
        if len(choices) < 2:
            raise forms.ValidationError(_("A question needs at least two choices."))
        correct = cleaned.get("correct_choice")
        if correct is not None and correct >= len(choices):
            self.add_error("correct_choice", _("The right choice must be one of the filled ones."))
        self.instance.choices = choices
        return cleaned


# The admin only shows fields declared on the form class, so the choice fields are
# declared here rather than added per instance.
ScreeningQuestionForm = type(
    "ScreeningQuestionForm",
    (_ScreeningQuestionFormBase,),
    {
        f"choice_{i}_{language}": forms.CharField(required=False, max_length=500)
        for i in range(CHOICE_SLOTS)
        for language in ("zh", "en")
    },
)


@admin.register(ScreeningQuestion)
class ScreeningQuestionAdmin(admin.ModelAdmin):
    """Staff keep the quiz bank here; `load_screening_questions` adds the bundled
    questions without touching the ones edited here."""

    form = ScreeningQuestionForm
    list_display = ["prompt_zh", "character", "right_answer", "active"]
    list_filter = ["active", "character__work_zh", "character"]
    list_editable = ["active"]
    search_fields = ["prompt_zh", "prompt_en", "character__name_zh", "character__name_en"]
    list_select_related = ["character"]
    fieldsets = [
        (None, {"fields": ["character", "prompt_zh", "prompt_en", "active"]}),
        (
            _("Choices"),
            {
                "fields": [(f"choice_{i}_zh", f"choice_{i}_en") for i in range(CHOICE_SLOTS)]
                + ["correct_choice"]
            },
        ),
    ]

    @admin.display(description=_("right answer"))
    def right_answer(self, question):
        choices = question.choices or []
        if 0 <= question.correct_choice < len(choices):
            return choices[question.correct_choice].get("zh", "")
        return "—"
