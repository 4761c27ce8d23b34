"""The API's query-string filters (django-filter). A value that cannot be what a filter
compares with (`?round=two`), or names a study, source or metric that does not exist
(`?study=pilto`), makes the request a 400 naming the parameter: a typo would otherwise
read as a filter that matched nothing."""

from typing import Any

import django_filters
from django import forms

from common.parsing import whole_number
from dialogues.models import Answer, Source

from ..models import Item, ItemKind, Judgment, Metric, Rating, Study

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


class KnownSlugField(forms.CharField):
    """The slug of an existing row of `model` (a study, a source, a metric); the error
    says where the slugs are listed, or, without `listed_at`, lists them."""

    def __init__(
        self, *args: Any, model: Any, noun: str, listed_at: str | None, **kwargs: Any
    ) -> None:
        self.model, self.noun, self.listed_at = model, noun, listed_at
        super().__init__(*args, **kwargs)

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value and not self.model.objects.filter(slug=value).exists():
            where = (
                f"the slugs are listed at {self.listed_at}"
                if self.listed_at
                else "one of " + ", ".join(self.model.objects.values_list("slug", flat=True))
            )
            # The value goes in as a parameter: django-filter formats the message with
            # `%`, and a typed "%" would break it.
            raise forms.ValidationError(
                "no %(noun)s '%(value)s' (%(where)s)",
                code="unknown",
                params={"noun": self.noun, "value": value, "where": where},
            )


class KnownSlugFilter(django_filters.Filter):
    field_class = KnownSlugField


def study_filter(field_name: str) -> KnownSlugFilter:
    return KnownSlugFilter(
        field_name=field_name, model=Study, noun="study", listed_at="/api/v1/studies/"
    )


def source_filter(field_name: str, *, distinct: bool = False) -> KnownSlugFilter:
    return KnownSlugFilter(
        field_name=field_name,
        model=Source,
        noun="source",
        listed_at="/api/v1/sources/",
        distinct=distinct,
    )


class KindField(forms.CharField):
    def validate(self, value: Any) -> None:
        super().validate(value)
        if value and value not in ItemKind.values:
            raise forms.ValidationError(" or ".join(ItemKind.values), code="invalid")


class KindFilter(django_filters.Filter):
    field_class = KindField


class AnswerFilter(django_filters.FilterSet):
    source = source_filter("source__slug")
    character = WholeNumberFilter(field_name="character")
    round = WholeNumberFilter(field_name="round")
    scenario = WholeNumberFilter(field_name="scenario__number")

    class Meta:
        model = Answer
        fields: list[str] = []


class ItemFilter(django_filters.FilterSet):
    study = study_filter("study__slug")
    character = WholeNumberFilter(field_name="character")
    round = WholeNumberFilter(field_name="round")
    kind = KindFilter(field_name="kind")

    class Meta:
        model = Item
        fields: list[str] = []


class JudgmentFilter(django_filters.FilterSet):
    study = study_filter("item__study__slug")
    character = WholeNumberFilter(field_name="item__character")
    round = WholeNumberFilter(field_name="item__round")
    # Through the item's answers: a diversity set holds several of one source's, and its
    # judgment would be listed once per answer.
    source = source_filter("item__slots__answer__source__slug", distinct=True)

    class Meta:
        model = Judgment
        fields: list[str] = []


class RatingFilter(django_filters.FilterSet):
    study = study_filter("judgment__item__study__slug")
    character = WholeNumberFilter(field_name="judgment__item__character")
    round = WholeNumberFilter(field_name="judgment__item__round")
    source = source_filter("answer__source__slug")
    metric = KnownSlugFilter(field_name="metric__slug", model=Metric, noun="metric", listed_at=None)

    class Meta:
        model = Rating
        fields: list[str] = []
