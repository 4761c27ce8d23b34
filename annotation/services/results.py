"""Recomputing a study's derived results from its judgments: the low-agreement flags and
the results document (`annotation.results`), stored as the study's StudyResults row.
Idempotent: the same judgments give the same document."""

import time

from django.core.cache import cache
from django.utils import timezone

from ..exports import software_version
from ..models import Study, StudyResults
from ..results.document import results_document
from ..results.loading import load_ratings
from ..stats.annotators import deviations_of
from .quality import low_agreement_flags
from .refreshes import recompute_seconds_key


def study_recompute(*, study: Study) -> StudyResults:
    """Everything the workers derive from a study, from one read of its ratings. How long
    it took is kept, to space the next refreshes (`CHATANIME_RESULTS_REFRESH_SPACING`)."""
    started = time.perf_counter()
    data = load_ratings(study)
    # Computed once: the flags and the annotators' quality figures both use them.
    deviations = deviations_of(data)
    low_agreement_flags(study=study, deviations=deviations)
    results = results_refresh(study=study, data=data, deviations=deviations)
    cache.set(recompute_seconds_key(study.pk), time.perf_counter() - started, None)
    return results


def results_refresh(*, study: Study, data=None, deviations=None) -> StudyResults:
    """Replace the study's results document with one computed now."""
    document = results_document(
        study=study, software=software_version(), data=data, deviations=deviations
    )
    results = StudyResults(
        study=study,
        computed_at=timezone.now(),
        judgments=document["judgments"],
        seconds=document["seconds"],
        payload=document,
    )
    # One upsert: `update_or_create` first read the row it replaces, decoding the whole
    # previous document for nothing (a few percent of a recompute on a large study).
    StudyResults.objects.bulk_create(
        [results],
        update_conflicts=True,
        unique_fields=["study"],
        update_fields=["computed_at", "judgments", "seconds", "payload"],
    )
    return results
