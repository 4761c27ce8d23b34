"""A study opened to a paid participant panel (Prolific, or any panel that hands people
over by a link carrying their id and takes them back with a completion code), and the
people who came from it.

The panel id is what the panel pays by, so it is kept, but only here: matching a returning
participant uses its keyed hash, and nothing of the annotation app (exports included)
ever sees either. Annotation knows a participant only as an ordinary pseudonymous user."""

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

PROLIFIC_ID_PARAMETER = "PROLIFIC_PID"
PROLIFIC_COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"


class Provider(models.TextChoices):
    PROLIFIC = "prolific", _("Prolific")
    GENERIC = "generic", _("Another panel (id in the link, completion code back)")


class PanelStudy(models.Model):
    """How one study is run on a panel: the codes the panel expects back, how much each
    participant does and how many may come. Changed only through
    `services.panel_configure`, which validates and audits."""

    study = models.OneToOneField("annotation.Study", on_delete=models.CASCADE, related_name="panel")
    provider = models.CharField(_("panel"), max_length=20, choices=Provider)
    # The query parameter that carries the participant's id in the panel's link.
    id_parameter = models.CharField(_("id parameter"), max_length=64, default=PROLIFIC_ID_PARAMETER)
    completion_url_template = models.CharField(
        _("completion URL"), max_length=500, default=PROLIFIC_COMPLETION_URL
    )
    completion_code = models.CharField(_("completion code"), max_length=64)
    screen_out_code = models.CharField(_("screen-out code"), max_length=64)
    failed_checks_code = models.CharField(_("failed-checks code"), max_length=64, blank=True)
    items_per_participant = models.PositiveIntegerField(
        _("items per participant"), validators=[MinValueValidator(1)]
    )
    minutes = models.PositiveIntegerField(
        _("time limit in minutes"), default=60, validators=[MinValueValidator(1)]
    )
    places = models.PositiveIntegerField(_("places (0 for no limit)"), default=0)
    quiz = models.BooleanField(
        _("character quiz"),
        default=False,
        help_text=_("Participants take the character quiz; otherwise they only choose characters."),
    )
    is_open = models.BooleanField(_("open"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("panel study")
        verbose_name_plural = _("panel studies")
        constraints = [
            models.CheckConstraint(
                condition=Q(items_per_participant__gte=1) & Q(minutes__gte=1),
                name="panel_study_positive_work",
            )
        ]

    def __str__(self):
        return f"{self.study.slug} ({self.provider})"


class ParticipantState(models.TextChoices):
    STARTED = "started", _("Started")
    SCREENED_OUT = "screened_out", _("Screened out")
    COMPLETED = "completed", _("Completed")
    FAILED_CHECKS = "failed_checks", _("Failed the attention checks")
    RETURNED = "returned", _("Returned")
    TIMED_OUT = "timed_out", _("Timed out")


# States the panel pays, which therefore end with the code that says so.
PAID_STATES = (ParticipantState.COMPLETED, ParticipantState.SCREENED_OUT)
# States that give the place back: the person left, or ran out of time.
GONE_STATES = (ParticipantState.RETURNED, ParticipantState.TIMED_OUT)


class Participant(models.Model):
    """One person sent by the panel to one study, with their pseudonymous account."""

    panel_study = models.ForeignKey(
        PanelStudy, on_delete=models.CASCADE, related_name="participants"
    )
    # HMAC-SHA256 of the panel id (keyed by SECRET_KEY): how a returning person is found.
    pid_hash = models.CharField(max_length=64)
    # The id itself, for paying the person through the panel and nothing else.
    pid = models.CharField(_("panel id"), max_length=64)
    # What Prolific sends beside the id (SESSION_ID, STUDY_ID); blank for other panels.
    session_id = models.CharField(_("panel session"), max_length=64, blank=True)
    prolific_study_id = models.CharField(_("Prolific study id"), max_length=64, blank=True)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="panel_participant"
    )
    state = models.CharField(
        _("state"), max_length=20, choices=ParticipantState, default=ParticipantState.STARTED
    )
    # The one code this person was given; never replaced once set.
    code = models.CharField(_("code given"), max_length=64, blank=True)
    started_at = models.DateTimeField(_("started"))
    deadline = models.DateTimeField(_("deadline"))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)

    class Meta:
        verbose_name = _("panel participant")
        constraints = [
            models.UniqueConstraint(
                fields=["panel_study", "pid_hash"], name="one_participant_per_panel_id"
            ),
            models.CheckConstraint(
                condition=~Q(state__in=PAID_STATES) | ~Q(code=""),
                name="paid_participant_has_code",
            ),
        ]

    def __str__(self):
        return f"{self.user.username} ({self.state})"
