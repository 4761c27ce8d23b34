"""Studies and the blinded items they consist of."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from dialogues.models import Answer, Character, Scenario, Source


class StudyStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    OPEN = "open", _("Open")
    PAUSED = "paused", _("Paused")
    CLOSED = "closed", _("Closed")


class PairingDesign(models.TextChoices):
    REFERENCE = "reference", _("Each compared source against the reference")
    ROUND_ROBIN = "round-robin", _("Every pair of sources")


class Study(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    status = models.CharField(
        _("status"), max_length=10, choices=StudyStatus, default=StudyStatus.DRAFT
    )
    reference_source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="+")
    # Named for the admin's two-list widgets, which take the field's name, not the form's.
    compared_sources = models.ManyToManyField(
        Source, related_name="+", verbose_name=_("compared sources")
    )
    characters = models.ManyToManyField(Character, related_name="+", verbose_name=_("characters"))
    scenarios = models.ManyToManyField(
        Scenario, related_name="+", blank=True, verbose_name=_("scenarios")
    )
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
    design = models.CharField(max_length=20, choices=PairingDesign, default=PairingDesign.REFERENCE)

    # Assignment policy
    cap_per_annotator = models.PositiveIntegerField(
        default=0, help_text=_("Most judgments one annotator may give in this study; 0 for no cap.")
    )
    cap_per_annotator_per_day = models.PositiveIntegerField(
        default=0, help_text=_("Most judgments one annotator may give per day; 0 for no cap.")
    )
    balance_characters = models.BooleanField(
        default=True, help_text=_("Serve the character whose items are least complete first.")
    )

    # Quality control
    gold_rate = models.FloatField(
        default=0.05,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=_("Share of served items that are gold / attention-check items."),
    )
    min_seconds_per_item = models.FloatField(
        default=15, help_text=_("Judgments faster than this are flagged as implausibly fast.")
    )
    flag_straight_lining = models.BooleanField(default=True)
    low_agreement_threshold = models.FloatField(
        default=1.5,
        help_text=_(
            "Flag an annotator whose ratings differ from the others' by more than this on average."
        ),
    )
    low_agreement_min_units = models.PositiveIntegerField(default=20)
    pause_after_flags = models.PositiveSmallIntegerField(
        default=0,
        help_text=_("Pause an annotator for review after this many flags; 0 never pauses."),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("study")
        verbose_name_plural = _("studies")

    def __str__(self):
        return self.name


class StudyMembership(models.Model):
    """A study manager's assignment of an annotator to a study. A study without members
    is open to every approved annotator of its characters; once it has members, only they
    get its items. `cap` overrides the study's per-annotator cap for this person, and
    `characters` narrows which of their approved characters they rate here."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_memberships"
    )
    cap = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_(
            "Most judgments this annotator may give in the study; 0 for no cap; "
            "empty for the study's cap."
        ),
    )
    characters = models.ManyToManyField(
        Character,
        blank=True,
        related_name="+",
        help_text=_(
            "The characters this annotator rates in the study (among those they are "
            "approved for); none chosen means all of them."
        ),
    )
    # Panel participants are paid a screen-out when no item is left for them, and every
    # skip closes the items that show its answers: a limit keeps skipping from being a
    # way to that pay.
    skips_allowed = models.PositiveIntegerField(
        _("skips allowed"),
        null=True,
        blank=True,
        help_text=_("Most items this annotator may skip in the study; empty for no limit."),
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("study member")
        verbose_name_plural = _("study members")
        constraints = [
            models.UniqueConstraint(fields=["study", "annotator"], name="one_membership_per_study")
        ]

    def __str__(self):
        return f"{self.annotator} in {self.study}"


class ItemKind(models.TextChoices):
    PAIR = "pair", _("Answer pair")
    DIVERSITY = "diversity", _("Diversity set")


class Item(models.Model):
    """One blinded unit of work: a pair (reference answer vs compared answer of one
    character, scenario and round) or a diversity set (answers of one source)."""

    # Indexed by the (study, character) index below, which begins with it.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items", db_index=False)
    kind = models.CharField(max_length=10, choices=ItemKind)
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    scenario = models.ForeignKey(
        Scenario, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    round = models.PositiveSmallIntegerField(null=True, blank=True)
    answers = models.ManyToManyField(Answer, through="ItemAnswer", related_name="items")
    judgment_count = models.PositiveSmallIntegerField(default=0)
    is_gold = models.BooleanField(default=False)
    # A diversity set is rated as a whole and belongs to the one source all its answers
    # come from; said here once, so that results, exports and progress need not find it
    # through the answers. Empty for a pair, whose two answers each have their source.
    diversity_source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        verbose_name = _("item")
        verbose_name_plural = _("study items")
        # Not with `judgment_count`: every judgment changes it, and a changed column that
        # an index holds makes PostgreSQL enter the row's new version in every index of
        # the table, where an unindexed one lets it update the row in place.
        indexes = [models.Index(fields=["study", "character"])]

    def __str__(self):
        return f"{self.study.slug} #{self.pk} ({self.kind})"


class CharacterProgress(models.Model):
    """A study's judgments given and items (gold aside) of one character: counted by each
    submission, in the statement that counts the item's. Every plan of an annotator's next
    items orders characters by it and reads from it when a character's work nears its
    end; summed from the study's items (24,000 for the published data) it cost each plan
    several milliseconds. Recounted from the items where they change otherwise: when the
    study's items are made, and when staff mark an item as gold or not
    (`services.character_progress_recount`)."""

    # Indexed by the unique constraint, which begins with it.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+", db_index=False)
    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="+")
    items = models.PositiveIntegerField(default=0)
    judgments = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "character"], name="one_progress_per_study_character"
            )
        ]

    def __str__(self):
        return f"{self.judgments} judgments of {self.items} items ({self.character_id})"


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


class ItemExposure(models.Model):
    """Every answer an item shows: its rated answers and, in round 2, each one's round-1
    answer as context. Leasing never shows an annotator an answer twice within a study."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="exposures")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["item", "answer"], name="exposure_once")]

    def __str__(self):
        return f"item {self.item_id} shows answer {self.answer_id}"


class GoldExpectation(models.Model):
    """On a gold item: the range a careful annotator's rating falls in, for one answer
    and one metric (or every metric when `metric` is empty)."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="gold_expectations")
    answer = models.ForeignKey(
        Answer, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    metric = models.ForeignKey(
        "annotation.Metric", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    minimum = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    maximum = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5)]
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(minimum__lte=models.F("maximum")), name="gold_range_ordered"
            )
        ]

    def __str__(self):
        return f"{self.metric_id or 'all'} in [{self.minimum}, {self.maximum}]"
