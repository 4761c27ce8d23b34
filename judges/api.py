"""The judge runs in the researchers' read-only REST API (`/api/v1/judge-runs/`): each
run's configuration, its progress and the figures beside the human raters as last
computed (`JudgeRun.figures`, stored by `judge_study` at the end of a run or by
`judge_report`). The endpoint's key and its address are not shown: they belong to the
admins who run judges, not to the researchers who read the figures."""

import django_filters
from rest_framework import serializers

from annotation.api.filters import study_filter
from annotation.api.views import ResearchViewSet

from .models import JudgeRun


class JudgeRunSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    self_source = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "study",
            "model",
            "temperature",
            "language",
            "prompt_version",
            "rubric_version",
            "both_orders",
            "items_requested",
            "self_source",
            "structured_output",
            "status",
            "created_at",
            "finished_at",
            "figures_computed_at",
            "figures",
        ]


class JudgeRunFilter(django_filters.FilterSet):
    study = study_filter("study__slug")

    class Meta:
        model = JudgeRun
        fields = ["status"]


class JudgeRunViewSet(ResearchViewSet):
    """Judge runs, newest first; `figures` is null until a run's report was computed."""

    queryset = JudgeRun.objects.select_related("study", "self_source").order_by(
        "-created_at", "-pk"
    )
    serializer_class = JudgeRunSerializer
    filterset_class = JudgeRunFilter
