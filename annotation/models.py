"""Who rates what, and what it means. Builds on `dialogues`, never the reverse."""

import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from dialogues.models import Answer, Character, Scenario, Source

LIKERT = (1, 5)


def new_token() -> str:
    """Opaque, unguessable, non-sequential: safe to put in an annotator's URL."""
    return secrets.token_urlsafe(16)


def localized(zh: str, en: str) -> str:
    return en if (get_language() or "").startswith("en") and en else zh


class Dimension(models.TextChoices):
    BASIC = "basic", _("Basic dialogue")
    ROLE_PLAYING = "role_playing", _("Role-playing")
    EMOTIONAL_SUPPORT = "emotional_support", _("Emotional support")
    OVERALL = "overall", _("Overall")


class Metric(models.Model):
    """One thing annotators rate on a 1–5 scale. The nine pair metrics and diversity are
    created by a data migration; their wording is editable in the admin."""

    slug = models.SlugField(unique=True)
    dimension = models.CharField(max_length=20, choices=Dimension)
    position = models.PositiveSmallIntegerField(default=0)
    label_zh = models.CharField(max_length=50)
    label_en = models.CharField(max_length=50)
    definition_zh = models.TextField()
    definition_en = models.TextField()
    # {"1": {"zh": ..., "en": ...}, ..., "5": {...}}
    anchors = models.JSONField(default=dict)
    for_diversity = models.BooleanField(
        default=False, help_text=_("Rated on diversity sets instead of answer pairs.")
    )

    class Meta:
        ordering = ["position"]

    def __str__(self):
        return self.slug

    @property
    def label(self):
        return localized(self.label_zh, self.label_en)

    @property
    def definition(self):
        return localized(self.definition_zh, self.definition_en)

    def anchor_list(self) -> list[tuple[int, str]]:
        """(value, meaning) for 1..5 in the UI language."""
        return [
            (value, localized(entry.get("zh", ""), entry.get("en", "")))
            for value, entry in ((v, self.anchors.get(str(v), {})) for v in range(1, 6))
        ]


class ProfileStatus(models.TextChoices):
    APPLIED = "applied", _("Applied")
    SCREENING = "screening", _("Screening")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    SUSPENDED = "suspended", _("Suspended")


class AnnotatorProfile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_profile"
    )
    status = models.CharField(max_length=20, choices=ProfileStatus, default=ProfileStatus.APPLIED)
    consented_at = models.DateTimeField(null=True, blank=True)
    # A stable pseudonym for exports: no email or name leaves the platform.
    pseudonym = models.CharField(max_length=32, unique=True, default=new_token)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("annotator profile")

    def __str__(self):
        return f"{self.user} ({self.status})"


class QualificationStatus(models.TextChoices):
    CLAIMED = "claimed", _("Claimed, quiz not taken")
    PASSED = "passed", _("Quiz passed, awaiting review")
    FAILED = "failed", _("Quiz failed")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")


class Qualification(models.Model):
    """An annotator's standing for one character: claimed, quizzed, then reviewed by staff.
    Only approved qualifications of approved annotators get work."""

    profile = models.ForeignKey(
        AnnotatorProfile, on_delete=models.CASCADE, related_name="qualifications"
    )
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=20, choices=QualificationStatus, default=QualificationStatus.CLAIMED
    )
    quiz_score = models.FloatField(null=True, blank=True)
    quiz_attempts = models.PositiveSmallIntegerField(default=0)
    roleplay_sample = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "character"], name="one_qualification_per_character"
            )
        ]

    def __str__(self):
        return f"{self.profile.user} / {self.character} / {self.status}"


class ScreeningQuestion(models.Model):
    """A multiple-choice question about a character and their work, from staff's bank."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    prompt_zh = models.TextField()
    prompt_en = models.TextField(blank=True)
    # [{"zh": ..., "en": ...}, ...]
    choices = models.JSONField()
    correct_choice = models.PositiveSmallIntegerField(
        help_text=_("Index of the right choice, from 0.")
    )
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["character_id", "id"]

    def __str__(self):
        return self.prompt_zh[:60]

    @property
    def prompt(self):
        return localized(self.prompt_zh, self.prompt_en)

    def choice_labels(self) -> list[str]:
        return [localized(c.get("zh", ""), c.get("en", "")) for c in self.choices]


class StudyStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    OPEN = "open", _("Open")
    PAUSED = "paused", _("Paused")
    CLOSED = "closed", _("Closed")


class Study(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    status = models.CharField(max_length=10, choices=StudyStatus, default=StudyStatus.DRAFT)
    reference_source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    compared_sources = models.ManyToManyField(Source, related_name="+")
    characters = models.ManyToManyField(Character, related_name="+")
    scenarios = models.ManyToManyField(Scenario, related_name="+", blank=True)
    rounds = models.JSONField(default=list)
    overlap = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)])
    include_diversity = models.BooleanField(default=False)
    diversity_set_size = models.PositiveSmallIntegerField(default=4)
    ask_human_guess = models.BooleanField(
        default=False, help_text=_("After rating a pair, ask which answer a human fan wrote.")
    )
    screening_pass_mark = models.FloatField(
        default=0.8, validators=[MinValueValidator(0), MaxValueValidator(1)]
    )
    lease_minutes = models.PositiveSmallIntegerField(default=30)
    break_every_items = models.PositiveSmallIntegerField(default=20)
    break_every_minutes = models.PositiveSmallIntegerField(default=45)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = _("studies")

    def __str__(self):
        return self.name


class ItemKind(models.TextChoices):
    PAIR = "pair", _("Answer pair")
    DIVERSITY = "diversity", _("Diversity set")


class Item(models.Model):
    """One blinded unit of work: a pair (reference answer vs compared answer of one
    character, scenario and round) or a diversity set (answers of one source)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    kind = models.CharField(max_length=10, choices=ItemKind)
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    round = models.PositiveSmallIntegerField(null=True, blank=True)
    answers = models.ManyToManyField(Answer, through="ItemAnswer", related_name="items")
    judgment_count = models.PositiveSmallIntegerField(default=0)
    is_gold = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["study", "character", "judgment_count"])]

    def __str__(self):
        return f"{self.study.slug} #{self.pk} ({self.kind})"


class ItemAnswer(models.Model):
    """An answer's slot in an item; slot 0 is the reference answer of a pair."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="slots")
    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    slot = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["slot"]
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="one_answer_per_slot"),
            models.UniqueConstraint(fields=["item", "answer"], name="answer_once_per_item"),
        ]

    def __str__(self):
        return f"item {self.item_id} slot {self.slot}"


class AssignmentState(models.TextChoices):
    ACTIVE = "active", _("Active")
    SUBMITTED = "submitted", _("Submitted")
    SKIPPED = "skipped", _("Skipped")
    EXPIRED = "expired", _("Expired")


class Assignment(models.Model):
    """An annotator's lease on an item, with the order in which its answers are shown."""

    token = models.CharField(max_length=32, unique=True, default=new_token)
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    state = models.CharField(max_length=10, choices=AssignmentState, default=AssignmentState.ACTIVE)
    # Slots in display order: [1, 0] shows the compared answer as A (left), the reference as B.
    display_order = models.JSONField()
    served_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    skip_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="one_assignment_per_annotator_item"
            )
        ]
        indexes = [
            models.Index(fields=["annotator", "state"]),
            models.Index(fields=["item", "state"]),
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


class Judgment(models.Model):
    """One annotator's submission for one item. Preference and guess are stored as the
    answers they point at, so that the display order never has to be replayed."""

    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments"
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

    class Meta:
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

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="ratings")
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.PROTECT, related_name="ratings"
    )
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="ratings")
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


class WorkerHeartbeat(models.Model):
    """Last sign of life of each Celery worker, written by a beat-scheduled task.

    Staff read it on the health page to tell a stalled results pipeline from a quiet one.
    """

    hostname = models.CharField(_("worker"), max_length=200, unique=True)
    seen_at = models.DateTimeField(_("last seen"))

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self):
        return f"{self.hostname} @ {self.seen_at:%Y-%m-%d %H:%M:%S}"
