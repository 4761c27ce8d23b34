"""The query strings and posts of the staff screens, read through Django forms.

Filters never refuse: a value that does not validate (a hand-edited URL) falls back to the
filter's default and the page still shows. Posts do refuse: the first field that does not
validate says why, and nothing is changed."""

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from common.parsing import whole_numbers
from common.typing import StrOrPromise

from ...models import AuditAction, FlagKind, ProfileStatus, Qualification, QualificationStatus

ANY: list[tuple[str, StrOrPromise]] = [("", "")]


class WholeNumbersField(forms.Field):
    """Ids from a repeated field (checkboxes); anything but a whole number is left out."""

    widget = forms.MultipleHiddenInput

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, **kwargs)

    def to_python(self, value: Any) -> list[int]:
        return whole_numbers(value or [])


def _choice(
    choices: Sequence[tuple[str, StrOrPromise]], message: StrOrPromise | None = None, **kwargs: Any
) -> forms.ChoiceField:
    errors = {"required": message, "invalid_choice": message} if message else None
    return forms.ChoiceField(choices=choices, error_messages=errors, **kwargs)


def _text(**kwargs: Any) -> forms.CharField:
    """Free text passed to the service as typed; the service cleans it."""
    return forms.CharField(required=False, strip=False, **kwargs)


class FilterForm(forms.Form):
    page = forms.IntegerField(required=False)

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(data)
        self.is_valid()
        for name in list(self.errors):
            self.cleaned_data[name] = self.fields[name].initial

    def filters(self) -> dict[str, Any]:
        """The filters as the templates and the pager's query strings use them."""
        return {name: value for name, value in self.cleaned_data.items() if name != "page"}


class ScreeningFilterForm(FilterForm):
    status = _choice(
        QualificationStatus.choices + ANY, required=False, initial=QualificationStatus.PASSED
    )
    character = forms.IntegerField(required=False, min_value=0)

    def clean_status(self) -> str:
        return self.cleaned_data["status"] or QualificationStatus.PASSED


class AnnotatorFilterForm(FilterForm):
    status = _choice([*ANY, *ProfileStatus.choices], required=False, initial="")
    q = forms.CharField(required=False)


class AuditFilterForm(FilterForm):
    action = _choice([*ANY, *AuditAction.choices], required=False, initial="")
    study = forms.IntegerField(required=False, min_value=0)
    actor = forms.CharField(required=False)


class ScreeningReviewForm(forms.Form):
    decision = _choice(
        [("approve", "approve"), ("reject", "reject")], _("Choose approve or reject.")
    )
    qualification = WholeNumbersField()
    note = _text()

    def clean_qualification(self) -> list[Qualification]:
        """The chosen applications; all of them must exist."""
        ids = self.cleaned_data["qualification"]
        qualifications = list(Qualification.objects.filter(pk__in=ids))
        if len(qualifications) != len(set(ids)):
            raise forms.ValidationError(_("Some of these applications do not exist."))
        return qualifications


class ReasonForm(forms.Form):
    reason = _text()


class FlagResolveForm(forms.Form):
    note = forms.CharField(error_messages={"required": _("Please give a reason.")})


class StudyCapsForm(forms.Form):
    # Whole numbers of 0 or more; the service checks them (an API client may call it too).
    cap_per_annotator = _text()
    cap_per_annotator_per_day = _text()


class StudyStatusForm(forms.Form):
    status = _text()


class JudgmentDecisionForm(forms.Form):
    decision = _choice(
        [("exclude", "exclude"), ("include", "include")], _("Choose keep or exclude.")
    )
    reason = _text()


class FlaggedDecisionForm(forms.Form):
    """Every judgment with a flag of one kind, kept or excluded at once."""

    kind = _choice(FlagKind.choices, _("Choose a kind of flag."))
    decision = _choice(
        [("exclude", "exclude"), ("include", "include")], _("Choose keep or exclude.")
    )
    reason = _text()


class MembershipAddForm(forms.Form):
    profile = WholeNumbersField()
    character = WholeNumbersField()
    cap = _text()


class MembershipChangeForm(forms.Form):
    remove = forms.BooleanField(required=False)
    cap = _text()

    def clean(self) -> dict[str, Any]:
        # An empty cap field means "the study's cap"; a post without the field is not a
        # cap change at all.
        if not self.cleaned_data.get("remove") and "cap" not in self.data:
            raise forms.ValidationError(_("Give a cap, or remove the annotator."))
        return self.cleaned_data
