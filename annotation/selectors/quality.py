"""Quality-control flags waiting for a staff decision."""

from django.db.models import Count, Min
from django.utils.translation import gettext as _

from dialogues.selectors import source_shown_name

from ..models import (
    AnnotatorProfile,
    FlagKind,
    Judgment,
    Metric,
    QualityFlag,
    Rating,
    Study,
)

# How many flagged judgments the dashboard lists at once; each decision brings in the next.
FLAGGED_SHOWN = 50


def flagged_judgments(study: Study, limit: int | None = None) -> list[dict]:
    """Judgments with open flags, to be kept or excluded; the longest waiting first (at
    most `limit`, by default FLAGGED_SHOWN)."""
    open_flags = QualityFlag.objects.filter(
        study=study, resolved_at__isnull=True, judgment__isnull=False
    )
    judgment_ids = list(
        open_flags.values("judgment_id")
        .annotate(first=Min("created_at"))
        .order_by("first", "judgment_id")
        .values_list("judgment_id", flat=True)[: limit or FLAGGED_SHOWN]
    )
    judgments = Judgment.objects.select_related(
        "item__character", "item__diversity_source"
    ).in_bulk(judgment_ids)
    names = dict(
        AnnotatorProfile.objects.filter(
            user_id__in={j.annotator_id for j in judgments.values()}
        ).values_list("user_id", "pseudonym")
    )
    flags: dict[int, list] = {}
    for flag in open_flags.filter(judgment_id__in=judgment_ids).order_by("created_at", "pk"):
        flags.setdefault(flag.judgment_id, []).append(flag)
    # The ratings as given, a row per answer (named by its source) and a column per metric,
    # so that a manager sees what was flagged (straight lines, wild values) before deciding.
    ratings: dict[int, dict] = {}
    for judgment_id, answer_id, source, position, value in (
        Rating.objects.filter(judgment_id__in=judgment_ids)
        .order_by("judgment_id", "answer_id", "metric__position")
        .values_list(
            "judgment_id", "answer_id", "answer__source__display_name", "metric__position", "value"
        )
    ):
        row = ratings.setdefault(judgment_id, {}).setdefault(answer_id, (source, {}))
        row[1][position] = value
    metrics = list(Metric.objects.order_by("position"))
    entries = []
    for pk in judgment_ids:
        rows = list(ratings.get(pk, {}).values())
        # A pair's metrics or a diversity set's, whichever the judgment rated.
        rated = [m for m in metrics if any(m.position in values for _s, values in rows)]
        entries.append(
            {
                "judgment": judgments[pk],
                "flags": flags.get(pk, []),
                "pseudonym": names.get(judgments[pk].annotator_id, ""),
                "metrics": rated,
                "ratings": [
                    (_row_name(judgments[pk], source), [values.get(m.position, "–") for m in rated])
                    for source, values in rows
                ],
            }
        )
    return entries


def _row_name(judgment: Judgment, source: str | None) -> str:
    """A row of ratings named by its answer's source; a diversity set's one rating is of
    the set as a whole (no answer), named by the source whose answers it gathers."""
    if source is None and judgment.item.diversity_source is not None:
        shown = source_shown_name(judgment.item.diversity_source.display_name)
        return _("%(source)s (diversity set)") % {"source": shown}
    return source_shown_name(source or "")


def flagged_annotators(study: Study) -> list[dict]:
    """Open flags on annotators' work as a whole (low agreement), with their profiles."""
    flags = list(
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True, judgment__isnull=True)
        .select_related("annotator")
        .order_by("created_at")
    )
    profiles = AnnotatorProfile.objects.in_bulk(
        [f.annotator_id for f in flags], field_name="user_id"
    )
    return [{"flag": f, "profile": profiles.get(f.annotator_id)} for f in flags]


def flagged_count(study: Study) -> int:
    return (
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True, judgment__isnull=False)
        .values("judgment_id")
        .distinct()
        .count()
    )


def flagged_kinds(study: Study) -> list[tuple[str, str, int]]:
    """The kinds of open flags on the study's judgments, each with its label and how many
    judgments carry one: what can be decided at once (`flagged_judgments_decide`)."""
    counts = dict(
        QualityFlag.objects.filter(study=study, resolved_at__isnull=True, judgment__isnull=False)
        .values("kind")
        .annotate(n=Count("judgment_id", distinct=True))
        .values_list("kind", "n")
    )
    return [(kind, label, counts[kind]) for kind, label in FlagKind.choices if counts.get(kind)]
