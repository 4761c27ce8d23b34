"""Read-only REST API for researchers: the data, the judgments and the results."""

from typing import Any

from django.conf import settings
from django.db.models import Count
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import translation
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from dialogues.models import Answer, Character, Scenario, Source

from .. import exports
from ..models import Item, Judgment, Rating, Study
from ..results.schema import ResultsSchemaError, read_document
from . import filters, serializers
from .permissions import IsResearcher


class ResearchViewSet(viewsets.ReadOnlyModelViewSet):
    """Read-only, for researchers; query-string filters come from the view's `filterset_class`
    (django-filter), and a value that cannot be a filter's (`?round=two`) is a 400."""

    permission_classes = [IsResearcher]
    filter_backends = [DjangoFilterBackend]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # A script that names no language (no Accept-Language, no language cookie) gets
        # the API's messages in English, as its own filter errors are, rather than the
        # site's default Chinese for DRF's ("身份认证信息未提供。") beside English ones.
        # Activated before authentication, so that its refusals read the same.
        if (
            "HTTP_ACCEPT_LANGUAGE" not in request.META
            and settings.LANGUAGE_COOKIE_NAME not in request.COOKIES
        ):
            translation.activate("en")
            request.LANGUAGE_CODE = "en"
        super().initial(request, *args, **kwargs)
        # PostgreSQL text cannot hold NUL: such a value can match nothing, and would
        # otherwise fail inside the database. Checked here for every parameter, path
        # and export ones included, not only the filters.
        for name, value in [*request.query_params.items(), *kwargs.items()]:
            if "\x00" in str(value):
                raise ValidationError({name: "must not contain NUL characters"})


class SourceViewSet(ResearchViewSet):
    queryset = Source.objects.all()
    serializer_class = serializers.SourceSerializer
    lookup_field = "slug"


class CharacterViewSet(ResearchViewSet):
    queryset = Character.objects.all()
    serializer_class = serializers.CharacterSerializer


class ScenarioViewSet(ResearchViewSet):
    queryset = Scenario.objects.all()
    serializer_class = serializers.ScenarioSerializer
    lookup_field = "number"


class AnswerViewSet(ResearchViewSet):
    queryset = Answer.objects.select_related("character", "scenario", "source").order_by("pk")
    serializer_class = serializers.AnswerSerializer
    filterset_class = filters.AnswerFilter


class UnreadableResults(APIException):
    """Stored results of a schema this version cannot read, until the study is recomputed."""

    status_code = 409
    default_code = "unreadable_results"


class StudyViewSet(ResearchViewSet):
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
    def results(self, request: Request, slug: str | None = None) -> Response:
        """Agreement, leaderboards and the other derived results, as the workers stored them."""
        study = self.get_object()
        results = getattr(study, "results", None)
        if results is None:
            raise NotFound("No results yet for this study.")
        try:
            document = read_document(results.payload)
        except ResultsSchemaError as error:
            raise UnreadableResults(f"{error}.") from error
        return Response({"computed_at": results.computed_at, **document})

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=["csv", "jsonl", "wide"], required=False),
            OpenApiParameter("include_excluded", bool, required=False),
            OpenApiParameter(
                "bom", bool, required=False, description="a byte order mark, for Excel (CSV)"
            ),
        ],
        responses={(200, "text/csv"): bytes},
    )
    @action(detail=True, url_path="export", url_name="export")
    def export(self, request: Request, slug: str | None = None) -> StreamingHttpResponse:
        """The study's ratings as a streamed file (see `export_ratings`). The file type is
        `kind`, because DRF reserves `format` for choosing a renderer."""
        study = get_object_or_404(Study, slug=slug)
        return export_response(
            study,
            request.query_params.get("kind", "csv"),
            _yes(request, "include_excluded"),
            bom=_yes(request, "bom"),
        )


YES, NO = ("1", "true", "yes"), ("", "0", "false", "no")


def _yes(request: Request, name: str) -> bool:
    """A yes/no parameter; anything else (`?include_excluded=maybe`) is a 400, not a
    "no" that would quietly leave the excluded judgments out."""
    value = request.query_params.get(name, "").lower()
    if value not in YES + NO:
        raise ValidationError({name: "1 or 0 (true or false)"})
    return value in YES


# The long and the wide CSV must not download under one name (the second would replace
# the first, or be saved as "(1)").
EXPORT_FILE_NAMES = {"csv": "ratings.csv", "wide": "ratings-wide.csv", "jsonl": "ratings.jsonl"}


def export_response(
    study: Study, kind: str, include_excluded: bool, *, bom: bool = False
) -> StreamingHttpResponse:
    if kind not in exports.KINDS:
        raise ValidationError({"kind": "csv, jsonl or wide"})
    if bom and kind == "jsonl":
        raise ValidationError({"bom": "a byte order mark is for CSV files (Excel)"})
    content_type = "application/x-ndjson" if kind == "jsonl" else "text/csv"
    response = StreamingHttpResponse(
        exports.export_chunks(study, kind, include_excluded, bom=bom),
        content_type=f"{content_type}; charset=utf-8",
    )
    filename = f"{study.slug}-{EXPORT_FILE_NAMES[kind]}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class ItemViewSet(ResearchViewSet):
    queryset = (
        Item.objects.select_related("study", "character", "scenario")
        .prefetch_related("slots__answer__source")
        .order_by("pk")
    )
    serializer_class = serializers.ItemSerializer
    filterset_class = filters.ItemFilter


class JudgmentViewSet(ResearchViewSet):
    queryset = Judgment.objects.select_related(
        "item__study",
        "annotator__annotator_profile",
        "preferred_answer__source",
        "assignment__left_source",
        "assignment__right_source",
    ).order_by("pk")
    serializer_class = serializers.JudgmentSerializer
    filterset_class = filters.JudgmentFilter


class RatingViewSet(ResearchViewSet):
    queryset = Rating.objects.select_related(
        "judgment__item__study",
        "judgment__annotator__annotator_profile",
        "answer__source",
        "metric",
    ).order_by("pk")
    serializer_class = serializers.RatingSerializer
    filterset_class = filters.RatingFilter
