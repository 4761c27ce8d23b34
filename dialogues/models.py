"""What is rated: characters, scenarios, answer sources and their answers.

This app knows nothing about annotation; `annotation` builds on it, never the reverse.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from .character_names import character_shown_name


class PersonaGroup(models.TextChoices):
    STUDENT = "student", _("Student")
    OFFICE_WORKER = "office_worker", _("Office worker")
    FREELANCER = "freelancer", _("Freelancer")
    SELF_EMPLOYED = "self_employed", _("Self-employed")


SCENARIO_COUNT = 60
ROUNDS = (1, 2)


def persona_group_for(number: int) -> str:
    """The study's 60 scenarios come in four blocks of 15, one per kind of user."""
    if not 1 <= number <= SCENARIO_COUNT:
        raise ValueError(f"scenario number {number} is outside 1..{SCENARIO_COUNT}")
    groups = list(PersonaGroup)
    return groups[(number - 1) // 15].value


class Character(models.Model):
    key = models.CharField(
        _("key"), max_length=200, unique=True, help_text=_("As in the data files: 《作品》的角色")
    )
    work_zh = models.CharField(_("work (Chinese)"), max_length=100)
    name_zh = models.CharField(_("name (Chinese)"), max_length=100)
    work_en = models.CharField(_("work (English)"), max_length=100, blank=True)
    name_en = models.CharField(_("name (English)"), max_length=100, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("character")
        verbose_name_plural = _("characters")

    def __str__(self):
        return self.key

    @property
    def shown_name(self) -> str:
        """Both names, as staff and researchers' pages show them (`character_shown_name`)."""
        return character_shown_name(self.name_zh, self.name_en)


class Scenario(models.Model):
    number = models.PositiveSmallIntegerField(_("number"), unique=True)
    question = models.TextField(_("round-1 question"))
    persona_group = models.CharField(_("persona group"), max_length=20, choices=PersonaGroup)

    class Meta:
        ordering = ["number"]
        verbose_name = _("scenario")
        verbose_name_plural = _("scenarios")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(number__gte=1, number__lte=SCENARIO_COUNT),
                name="scenario_number_in_range",
            )
        ]

    def __str__(self):
        return f"{self.number}. {self.question[:30]}"


class SourceKind(models.TextChoices):
    HUMAN = "human", _("Human fan")
    LLM = "llm", _("LLM")


class Source(models.Model):
    slug = models.SlugField(_("slug"), max_length=100, unique=True)
    kind = models.CharField(_("kind"), max_length=10, choices=SourceKind)
    display_name = models.CharField(_("display name"), max_length=100)

    class Meta:
        ordering = ["kind", "slug"]
        verbose_name = _("source")
        verbose_name_plural = _("sources")

    def __str__(self):
        return self.display_name


class Answer(models.Model):
    """One source's reply, as one character, to one round of one scenario.

    A round-2 answer answers a follow-up that a simulated user wrote in reaction to the
    same source's round-1 answer, so `question` differs per source in round 2.
    """

    character = models.ForeignKey(Character, on_delete=models.PROTECT, related_name="answers")
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="answers")
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="answers")
    round = models.PositiveSmallIntegerField(_("round"), choices=[(1, "1"), (2, "2")])
    question = models.TextField(_("question"))
    text = models.TextField(_("answer"))
    # The fan who wrote it in the platform (imported answers have none), so that nobody
    # is asked to rate a study containing their own answers.
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("author"),
    )
    # The writer's pseudonym as the file it came from gave it, so that who wrote which
    # answers survives an export and an import elsewhere (where no account of theirs exists).
    # A default in the database too: processes still running the previous release insert
    # answers without this column while a deployment migrates.
    author_label = models.CharField(
        _("author's pseudonym"), max_length=64, blank=True, default="", db_default=""
    )

    class Meta:
        ordering = ["character_id", "scenario_id", "source_id", "round"]
        verbose_name = _("answer")
        verbose_name_plural = _("answers")
        constraints = [
            models.UniqueConstraint(
                fields=["character", "scenario", "source", "round"], name="one_answer_per_cell"
            ),
            models.CheckConstraint(
                condition=models.Q(round__in=ROUNDS), name="answer_round_1_or_2"
            ),
        ]
        indexes = [models.Index(fields=["source", "round"])]

    def __str__(self):
        return f"{self.character} / {self.scenario.number} / {self.source.slug} / r{self.round}"
