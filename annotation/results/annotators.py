"""Per-annotator figures, computed once: the results document and the staff's annotator
pages both take an annotator's counted judgments, excluded judgments, median time on task
and open flags from `annotator_work`."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count

from ..models import AnnotatorProfile, GoldCheck, Judgment, QualityFlag, Study
from ..stats.annotators import median_seconds
from ..stats.arrays import clean
from .schema import AnnotatorFigures


@dataclass
class AnnotatorWork:
    """One annotator's work over the judgments asked about. `judgments` and
    `median_seconds` are over counted judgments only (`Judgment.objects.counted()`), so
    that the results page, the staff pages and the export quote the same figures."""

    judgments: int = 0
    excluded: int = 0
    median_seconds: float | None = None
    open_flags: int = 0


def annotator_work(judgments, open_flags) -> dict[int, AnnotatorWork]:
    """Per annotator id, over a queryset of judgments and one of open quality flags
    (three queries). Annotators with no judgment and no flag there are absent."""
    seconds: dict[int, list[float]] = defaultdict(list)
    for annotator_id, taken in judgments.counted().values_list("annotator_id", "seconds_on_task"):
        seconds[annotator_id].append(taken)
    excluded = dict(
        judgments.filter(excluded=True).values_list("annotator_id").annotate(n=Count("pk"))
    )
    flags = dict(open_flags.values_list("annotator_id").annotate(n=Count("pk")))
    return {
        annotator_id: AnnotatorWork(
            judgments=len(seconds[annotator_id]),
            excluded=excluded.get(annotator_id, 0),
            median_seconds=median_seconds(seconds[annotator_id]),
            open_flags=flags.get(annotator_id, 0),
        )
        for annotator_id in {*seconds, *excluded, *flags}
    }


def study_annotator_figures(study: Study, deviations) -> dict[str, AnnotatorFigures]:
    """Per annotator of the study (by pseudonym): their work, their distance from the
    others, and their gold accuracy (about gold items, which are never counted)."""
    pseudonyms = dict(AnnotatorProfile.objects.values_list("user_id", "pseudonym"))
    judgments = Judgment.objects.filter(item__study=study)
    work = annotator_work(
        judgments, QualityFlag.objects.filter(study=study, resolved_at__isnull=True)
    )
    gold: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for annotator_id, passed in GoldCheck.objects.filter(judgment__item__study=study).values_list(
        "judgment__annotator_id", "passed"
    ):
        gold[annotator_id][0] += passed
        gold[annotator_id][1] += 1
    annotators = set(judgments.values_list("annotator_id", flat=True).distinct())
    figures = {}
    for annotator_id in sorted(annotators):
        mine = work.get(annotator_id, AnnotatorWork())
        distance, units = deviations.get(annotator_id, (float("nan"), 0))
        figures[pseudonyms.get(annotator_id, str(annotator_id))] = AnnotatorFigures(
            judgments=mine.judgments,
            excluded=mine.excluded,
            mean_distance=clean(distance),
            units_compared=units,
            gold_passed=gold[annotator_id][0],
            gold_checked=gold[annotator_id][1],
            open_flags=mine.open_flags,
            median_seconds=mine.median_seconds,
        )
    return figures
