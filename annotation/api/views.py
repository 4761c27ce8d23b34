"""Read-only REST API for researchers: the data, the judgments and the results."""

from django.db.models import Count
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from dialogues.models import Answer, Character, Scenario, Source

from .. import exports
from ..models import Item, Judgment, Rating, Study
from ..parsing import whole_number
from . import serializers
from .permissions import IsResearcher


class FilteredViewSet(viewsets.ReadOnlyModelViewSet):
    """Query-string filters: `filters` maps a parameter to the lookup it filters on."""

    permission_classes = [IsResearcher]
    filters: dict[str, str] = {}

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        # PostgreSQL text cannot hold NUL: such a value can match nothing, and would
        # otherwise fail inside the database.
        for name, value in [*request.query_params.items(), *kwargs.items()]:
            if "\x00" in str(value):
                raise ValidationError({name: "must not contain NUL characters"})

    def filter_queryset(self, queryset):
        for parameter, lookup in self.filters.items():
            value = self.request.query_params.get(parameter)
            if value in (None, ""):
                continue
            if lookup.endswith(("round", "number", "_id", "character")) and (
                whole_number(value) is None
            ):
                raise ValidationError({parameter: "must be a whole number"})
            queryset = queryset.filter(**{lookup: value})
        return queryset


def _parameters(*names):
    return extend_schema(parameters=[OpenApiParameter(name, str, required=False) for name in names])


class SourceViewSet(FilteredViewSet):
    queryset = Source.objects.all()
    serializer_class = serializers.SourceSerializer
    lookup_field = "slug"


class CharacterViewSet(FilteredViewSet):
    queryset = Character.objects.all()
    serializer_class = serializers.CharacterSerializer


class ScenarioViewSet(FilteredViewSet):
    queryset = Scenario.objects.all()
    serializer_class = serializers.ScenarioSerializer
    lookup_field = "number"


@_parameters("source", "character", "round", "scenario")
class AnswerViewSet(FilteredViewSet):
    queryset = Answer.objects.select_related("character", "scenario", "source").order_by("pk")
    serializer_class = serializers.AnswerSerializer
    filters = {
        "source": "source__slug",
        "character": "character",
        "round": "round",
        "scenario": "scenario__number",
    }


class StudyViewSet(FilteredViewSet):
    queryset = (
        Study.objects.select_related("reference_source")
        .prefetch_related("compared_sources", "characters")
        .annotate(item_count=Count("items"))
        .order_by("pk")
    )
    serializer_class = serializers.StudySerializer
    lookup_field = "slug"

    @extend_schema(responses={200: dict})
    @action(detail=True)
    def results(self, request, slug=None):
        """Agreement, leaderboards and the other derived results, as the workers stored them."""
        study = self.get_object()
        results = getattr(study, "results", None)
        if results is None:
            raise NotFound("No results yet for this study.")
        return Response({"computed_at": results.computed_at, **results.payload})

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=["csv", "jsonl", "wide"], required=False),
            OpenApiParameter("include_excluded", bool, required=False),
        ],
        responses={(200, "text/csv"): bytes},
    )
    @action(detail=True, url_path="export", url_name="export")
    def export(self, request, slug=None):
        """The study's ratings as a streamed file (see `export_ratings`). The file type is
        `kind`, because DRF reserves `format` for choosing a renderer."""
        study = get_object_or_404(Study, slug=slug)
        return export_response(
            study,
            request.query_params.get("kind", "csv"),
            request.query_params.get("include_excluded") in ("1", "true", "yes"),
        )


def export_response(study, kind: str, include_excluded: bool):
    if kind not in exports.KINDS:
        raise ValidationError({"kind": "csv, jsonl or wide"})
    content_type = "application/x-ndjson" if kind == "jsonl" else "text/csv"
    suffix = "jsonl" if kind == "jsonl" else "csv"
    response = StreamingHttpResponse(
        exports.export_chunks(study, kind, include_excluded),
        content_type=f"{content_type}; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-ratings.{suffix}"'
    return response


@_parameters("study", "character", "round", "kind")
class ItemViewSet(FilteredViewSet):
    queryset = (
        Item.objects.select_related("study", "character", "scenario")
        .prefetch_related("slots__answer__source")
        .order_by("pk")
    )
    serializer_class = serializers.ItemSerializer
    filters = {"study": "study__slug", "character": "character", "round": "round", "kind": "kind"}


@_parameters("study", "character", "round", "source")
class JudgmentViewSet(FilteredViewSet):
    queryset = Judgment.objects.select_related(
        "item__study",
        "annotator__annotator_profile",
        "preferred_answer__source",
        "assignment__left_source",
        "assignment__right_source",
    ).order_by("pk")
    serializer_class = serializers.JudgmentSerializer
    filters = {
        "study": "item__study__slug",
        "character": "item__character",
        "round": "item__round",
        "source": "item__slots__answer__source__slug",
    }


@_parameters("study", "character", "round", "source", "metric")
class RatingViewSet(FilteredViewSet):
    queryset = Rating.objects.select_related(
        "judgment__item__study",
        "judgment__annotator__annotator_profile",
        "answer__source",
        "metric",
    ).order_by("pk")
    serializer_class = serializers.RatingSerializer
    filters = {
        "study": "judgment__item__study__slug",
        "character": "judgment__item__character",
        "round": "judgment__item__round",
        "source": "answer__source__slug",
        "metric": "metric__slug",
    }
