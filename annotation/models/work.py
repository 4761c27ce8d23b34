"""Leases, judgments and ratings: what annotators do."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.template.defaultfilters import floatformat
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from common.text import rounded_number
from dialogues.models import Answer, Source

from .common import new_token
from .metrics import Metric
from .studies import Item, Study


class AssignmentState(models.TextChoices):
    ACTIVE = "active", _("Active")
    SUBMITTED = "submitted", _("Submitted")
    SKIPPED = "skipped", _("Skipped")
    EXPIRED = "expired", _("Expired")


class Assignment(models.Model):
    """An annotator's lease on an item, with the order in which its answers are shown.

    Named before the word was settled: this is the lease (services/leases.py), not the
    pairing rules (annotation/pairing.py) nor a study's members (the staff members page).
    The model keeps its name, since renaming it would rename its table and every relation."""

    token = models.CharField(max_length=32, unique=True, default=new_token)
    # No index of their own for `item` and `annotator`: the indexes below begin with
    # them. Every lease written, and every state it passes through, updates each index
    # of the table, on the loop's every judgment.
    item = models.ForeignKey(
        Item, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="assignments",
        db_index=False,
    )
    state = models.CharField(max_length=10, choices=AssignmentState, default=AssignmentState.ACTIVE)
    # Slots in display order: [1, 0] shows the compared answer as A (left), the reference as B.
    display_order = models.JSONField()
    served_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    skip_reason = models.CharField(max_length=200, blank=True)
    # Which sources were shown left and right. Server-side only: it drives position
    # counterbalancing and the position-bias statistics.
    left_source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    right_source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name = _("lease")
        verbose_name_plural = _("leases")
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="one_assignment_per_annotator_item"
            )
        ]
        indexes = [
            models.Index(fields=["annotator", "state"]),
            # The live leases, which every plan and every refused lease read to see which
            # items are full: a few per annotator at work, however many leases the study
            # has had. An index on (item, state) had to be read whole for them.
            models.Index(
                fields=["item"],
                condition=Q(state=AssignmentState.ACTIVE),
                name="live_leases_by_item",
            ),
        ]

    def __str__(self):
        return f"{self.annotator} on item {self.item_id} ({self.state})"


class Preference(models.TextChoices):
    A = "a", "A"
    B = "b", "B"
    TIE = "tie", _("Tie")


class HumanGuess(models.TextChoices):
    A = "a", "A"
    B = "b", "B"
    UNSURE = "unsure", _("Not sure")


# A counted judgment is one the results are computed from: not excluded by staff and not
# on a gold (attention-check) item, whose answers are known in advance. Results,
# per-annotator figures, the exports' `counted` column and the export manifest all count
# with this one definition, written here in the three forms its readers need (a test
# holds them equal): the ORM's, SQL's for the raw queries that join judgments as `j` and
# items as `i`, and Python's for a row already read.
COUNTED_JUDGMENT = models.Q(excluded=False, item__is_gold=False)
COUNTED_JUDGMENT_SQL = "NOT j.excluded AND NOT i.is_gold"


def is_counted(*, excluded: bool, is_gold: bool) -> bool:
    return not excluded and not is_gold


class JudgmentQuerySet(models.QuerySet):
    def counted(self):
        return self.filter(COUNTED_JUDGMENT)


class Judgment(models.Model):
    """One annotator's submission for one item. Preference and guess are stored as the
    answers they point at, so that the display order never has to be replayed."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="judgments")
    # The item's study, kept with the judgment (an item never changes study): the
    # progress line counts an annotator's judgments in open studies on every rating page,
    # and through the items that join grew with every judgment they gave.
    study = models.ForeignKey(
        Study, on_delete=models.PROTECT, related_name="judgments", editable=False
    )
    # Indexed by the (annotator, submitted_at) index below, which begins with it.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="judgments",
        db_index=False,
    )
    assignment = models.OneToOneField(Assignment, on_delete=models.PROTECT, related_name="judgment")
    submitted_at = models.DateTimeField()
    seconds_on_task = models.FloatField()
    preferred_answer = models.ForeignKey(
        Answer,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_("Empty for a tie or a diversity item."),
    )
    is_tie = models.BooleanField(default=False)
    human_guess = models.ForeignKey(
        Answer,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text=_(
            "The answer the annotator thought a human fan wrote; empty if unsure or not asked."
        ),
    )
    human_guess_asked = models.BooleanField(default=False)
    comment = models.TextField(blank=True)
    excluded = models.BooleanField(default=False)
    simulated = models.BooleanField(default=False)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        verbose_name = _("judgment")
        verbose_name_plural = _("judgments")
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="one_judgment_per_annotator_item"
            )
        ]
        indexes = [models.Index(fields=["annotator", "submitted_at"])]

    def __str__(self):
        return f"judgment {self.pk} by {self.annotator} on item {self.item_id}"


class Rating(models.Model):
    """One value for one metric: of one answer of a pair, or (answer empty) of a whole
    diversity set."""

    # No index of their own for `judgment` (the unique constraint below begins with it) and
    # `metric` (nothing reads ratings by metric; a metric that has ratings cannot be
    # deleted): a judgment writes some twenty ratings, each entered in every index.
    judgment = models.ForeignKey(
        Judgment, on_delete=models.CASCADE, related_name="ratings", db_index=False
    )
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.PROTECT, related_name="ratings"
    )
    metric = models.ForeignKey(
        Metric, on_delete=models.PROTECT, related_name="ratings", db_index=False
    )
    value = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5)]
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judgment", "answer", "metric"], name="one_rating_per_metric"
            ),
            models.UniqueConstraint(
                fields=["judgment", "metric"],
                condition=Q(answer__isnull=True),
                name="one_set_rating_per_metric",
            ),
            models.CheckConstraint(condition=Q(value__gte=1, value__lte=5), name="rating_1_to_5"),
        ]

    def __str__(self):
        return f"{self.metric_id}={self.value}"


class AnswerExposure(models.Model):
    """An answer an annotator has been shown within a study (rated or as context)."""

    # Indexed by the unique constraint below, which begins with it.
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "study", "answer"], name="answer_shown_once"
            )
        ]

    def __str__(self):
        return f"{self.annotator_id} saw {self.answer_id}"


class JudgmentDecision(models.Model):
    """A staff decision to exclude a judgment from results, or to include it again."""

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="decisions")
    excluded = models.BooleanField()
    reason = models.TextField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decided_at"]

    def __str__(self):
        return f"{'exclude' if self.excluded else 'include'} {self.judgment_id}: {self.reason}"


class GoldCheck(models.Model):
    judgment = models.OneToOneField(Judgment, on_delete=models.CASCADE, related_name="gold_check")
    passed = models.BooleanField()
    # [{"answer": id, "metric": slug, "value": v, "minimum": a, "maximum": b}, ...]
    failures = models.JSONField(default=list)

    def __str__(self):
        return f"gold {'passed' if self.passed else 'failed'} ({self.judgment_id})"


class FlagKind(models.TextChoices):
    FAILED_CHECK = "failed_check", _("Failed an attention check")
    STRAIGHT_LINING = "straight_lining", _("Same value on every metric")
    TOO_FAST = "too_fast", _("Implausibly fast")
    LOW_AGREEMENT = "low_agreement", _("Low agreement with other annotators")


class QualityFlag(models.Model):
    """A reason for staff to look at an annotator's work. Flags never change data."""

    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="quality_flags"
    )
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="quality_flags")
    kind = models.CharField(max_length=20, choices=FlagKind)
    judgment = models.ForeignKey(
        Judgment, null=True, blank=True, on_delete=models.CASCADE, related_name="flags"
    )
    # The numbers behind the flag, e.g. {"seconds": 3.2, "minimum": 15}: stored as data and
    # put into words in the reader's language (see `description`).
    figures = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("quality flag")
        verbose_name_plural = _("quality flags")
        constraints = [
            # One low-agreement flag per annotator and study at a time; per-judgment flags once each.
            models.UniqueConstraint(
                fields=["annotator", "study", "kind"],
                condition=Q(judgment__isnull=True, resolved_at__isnull=True),
                name="one_open_study_flag_per_kind",
            ),
            models.UniqueConstraint(
                fields=["judgment", "kind"],
                condition=Q(judgment__isnull=False),
                name="one_flag_per_judgment_kind",
            ),
        ]

    def __str__(self):
        return f"{self.kind} for {self.annotator_id}"

    @property
    def description(self) -> str:
        """What was found, in the active language; empty when there are no figures."""
        return describe_flag(self.kind, self.figures)


def describe_flag(kind: str, figures: dict) -> str:
    try:
        if kind == FlagKind.FAILED_CHECK:
            count = int(figures["ratings"])
            return ngettext(
                "%(count)d rating outside the expected range",
                "%(count)d ratings outside the expected range",
                count,
            ) % {"count": count}
        if kind == FlagKind.STRAIGHT_LINING:
            return gettext("every rating is %(value)d") % {"value": int(figures["value"])}
        if kind == FlagKind.TOO_FAST:
            return gettext(
                "%(seconds)s s on the item, below the study's minimum of %(minimum)s s"
            ) % {
                "seconds": rounded_number(figures["seconds"], 1),
                # A whole number of seconds reads "15", not "15.0".
                "minimum": floatformat(figures["minimum"], -1),
            }
        if kind == FlagKind.LOW_AGREEMENT:
            count = int(figures["ratings"])
            return ngettext(
                "mean distance %(distance)s from the other annotators over %(count)d rating",
                "mean distance %(distance)s from the other annotators over %(count)d ratings",
                count,
            ) % {"distance": rounded_number(figures["distance"], 2), "count": count}
    except (KeyError, TypeError, ValueError):
        pass
    # Flags written before figures were kept carry their original English wording.
    return str(figures.get("text", ""))
