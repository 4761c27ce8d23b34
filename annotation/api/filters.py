"""The API's query-string filters (django-filter). A value that cannot be what a filter
compares with (`?round=two`) makes the request a 400 naming the parameter."""

from typing import Any

import django_filters
from django import forms

from common.parsing import whole_number
from dialogues.models import Answer

from ..models import Item, Judgment, Rating

# The largest value a database integer column (64-bit) can be compared with; a larger one
# would fail inside the database instead of matching nothing.
LARGEST_ID = 2**63 - 1


class WholeNumberField(forms.Field):
    """ASCII digits only: int() refuses "²", which str.isdigit() lets through."""

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        number = whole_number(value)
        if number is None or number > LARGEST_ID:
            raise forms.ValidationError("must be a whole number", code="invalid")
        return number


class WholeNumberFilter(django_filters.Filter):
    field_class = WholeNumberField


class AnswerFilter(django_filters.FilterSet):
    source = django_filters.CharFilter(field_name="source__slug")
    character = WholeNumberFilter(field_name="character")
    round = WholeNumberFilter(field_name="round")
    scenario = WholeNumberFilter(field_name="scenario__number")

    class Meta:
        model = Answer
        fields: list[str] = []


class ItemFilter(django_filters.FilterSet):
    study = django_filters.CharFilter(field_name="study__slug")
    character = WholeNumberFilter(field_name="character")
    round = WholeNumberFilter(field_name="round")
    kind = django_filters.CharFilter(field_name="kind")

    class Meta:
        model = Item
        fields: list[str] = []


class JudgmentFilter(django_filters.FilterSet):
    study = django_filters.CharFilter(field_name="item__study__slug")
    character = WholeNumberFilter(field_name="item__character")
    round = WholeNumberFilter(field_name="item__round")
    source = django_filters.CharFilter(field_name="item__slots__answer__source__slug")

    class Meta:
        model = Judgment
        fields: list[str] = []


class RatingFilter(django_filters.FilterSet):
    study = django_filters.CharFilter(field_name="judgment__item__study__slug")
    character = WholeNumberFilter(field_name="judgment__item__character")
    round = WholeNumberFilter(field_name="judgment__item__round")
    source = django_filters.CharFilter(field_name="answer__source__slug")
    metric = django_filters.CharFilter(field_name="metric__slug")

    class Meta:
        model = Rating
        fields: list[str] = []
