"""A study's results document from the database: the inputs of the pure figures
(`annotation.stats.study`), the interval rules from settings, and the per-annotator part.
The document is returned, not stored: `annotation.services.results` stores it."""

import time

from django.conf import settings

from dialogues.models import Source

from ..models import Dimension, Judgment, Metric, Study
from ..stats.annotators import deviations_of
from ..stats.rules import Rules
from ..stats.study import MetricInfo, SourceInfo, StudyInputs, study_figures
from .annotators import study_annotator_figures
from .loading import load_answer_styles, load_preference_rows, load_ratings
from .schema import SCHEMA_VERSION, ResultsDocument

# The dimensions a leaderboard averages over: `overall` holds diversity alone.
LEADERBOARD_DIMENSIONS = [dim for dim in Dimension.values if dim != Dimension.OVERALL]


def rules_from_settings() -> Rules:
    return Rules(
        draws=settings.CHATANIME_BOOTSTRAP_DRAWS,
        seed=settings.CHATANIME_BOOTSTRAP_SEED,
        min_judgments=settings.CHATANIME_MIN_JUDGMENTS,
        min_annotators=settings.CHATANIME_MIN_ANNOTATORS,
    )


def study_inputs(study: Study, data=None) -> StudyInputs:
    metrics = [
        MetricInfo(m.pk, m.slug, m.dimension, m.label_zh, m.label_en)
        for m in Metric.objects.order_by("position")
    ]
    sources = {s.pk: SourceInfo(s.slug, s.kind, s.display_name) for s in Source.objects.all()}
    data = data if data is not None else load_ratings(study)
    return StudyInputs(
        data=data,
        metrics=metrics,
        sources=sources,
        reference_source=study.reference_source_id,
        preference_rows=load_preference_rows(study, data),
        judgments=Judgment.objects.filter(item__study=study).counted().count(),
        dimensions=LEADERBOARD_DIMENSIONS,
        answer_styles=load_answer_styles(study),
    )


def results_document(
    *, study: Study, software: dict, data=None, deviations=None
) -> ResultsDocument:
    """The study's whole results document, from one read of its ratings (or `data`, that
    read done already) and the annotators' distances (`deviations`, likewise); `software`
    says which version computed it."""
    started = time.perf_counter()
    inputs = study_inputs(study, data)
    payload = {
        "schema_version": SCHEMA_VERSION,
        "study": study.slug,
        **study_figures(inputs, rules_from_settings()),
    }
    payload["annotators"] = study_annotator_figures(
        study, deviations if deviations is not None else deviations_of(inputs.data)
    )
    payload["software"] = software
    payload["seconds"] = round(time.perf_counter() - started, 3)
    return payload  # type: ignore[return-value]
