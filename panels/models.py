"""A study opened to a paid participant panel (Prolific, or any panel that hands people
over by a link carrying their id and takes them back with a completion code), and the
people who came from it.

The panel id is what the panel pays by, so it is kept, but only here: matching a returning
participant uses its keyed hash, and nothing of the annotation app (exports included)
ever sees either. Annotation knows a participant only as an ordinary pseudonymous user."""

from urllib.parse import urlsplit

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

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
    # A skip closes the items showing its answers, and a participant left with no item is
    # paid a screen-out: beyond a few, skips would be a way to be paid without rating.
    skips_per_participant = models.PositiveIntegerField(_("skips per participant"), default=3)
    quiz = models.BooleanField(
        _("character quiz"),
        default=False,
        help_text=_("Participants take the character quiz; otherwise they only choose characters."),
    )
    is_open = models.BooleanField(_("open"), default=False)
    # After which of a participant's items an instructional attention check is shown
    # (e.g. [3, 8]); empty for none. Checks are the panel's rules on pay, see `checks`.
    check_positions = models.JSONField(_("attention checks after items"), default=list, blank=True)
    # Keys of checks staff found unclear: failing one of them never counts against anyone.
    voided_checks = models.JSONField(default=list, blank=True)
    # What the panel pays a participant who completes, in the currency's smallest unit
    # (pence, cents, fen): the dashboard's effective hourly pay. 0 when not known.
    reward_minor_units = models.PositiveIntegerField(_("reward per participant"), default=0)
    currency = models.CharField(_("currency"), max_length=3, default="GBP")
    # The study's own id on Prolific, for what staff do through Prolific's API.
    prolific_study_id = models.CharField(_("Prolific study id"), max_length=64, blank=True)
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

    @property
    def panel_site(self) -> str:
        """The panel's own site, where a participant who stopped goes back to (to return
        the study): the address of its completion link without the path, or "" when that
        is not a web address."""
        parts = urlsplit(self.completion_url_template)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return ""
        return f"{parts.scheme}://{parts.netloc}/"


class ParticipantState(models.TextChoices):
    # "Started" alone is also a column of start times: the state says it apart by context.
    STARTED = "started", pgettext_lazy("panel participant state", "Started")
    SCREENED_OUT = "screened_out", _("Screened out")
    COMPLETED = "completed", _("Completed")
    FAILED_CHECKS = "failed_checks", _("Failed the attention checks")
    RETURNED = "returned", _("Returned")
    TIMED_OUT = "timed_out", _("Timed out")


# States the panel pays, which therefore end with the code that says so.
PAID_STATES = (ParticipantState.COMPLETED, ParticipantState.SCREENED_OUT)
# States that give the place back: the person left, or ran out of time.
GONE_STATES = (ParticipantState.RETURNED, ParticipantState.TIMED_OUT)


class Decision(models.TextChoices):
    """What staff told the panel about a participant's submission."""

    NONE = "", _("Not decided")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    RETURN_ASKED = "return_asked", _("Asked to return")


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
    # Quality signals that never decide pay on their own (too fast, straight-lining, low
    # agreement) mark the submission for a person to look at: {"too_fast": 2, ...}.
    review_reasons = models.JSONField(default=dict, blank=True)
    decision = models.CharField(_("decision"), max_length=20, choices=Decision, blank=True)
    decision_note = models.TextField(_("reason given"), blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    bonus_minor_units = models.PositiveIntegerField(_("bonus"), default=0)

    class Meta:
        verbose_name_plural = _("panel participants")
        verbose_name = _("panel participant")
        # Panel ids and payments are for the people who pay participants through the
        # panel (superusers, and staff given this permission), not for every manager.
        permissions = [("pay_participants", _("Can see panel ids and pay panel participants"))]
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


class CheckAnswer(models.Model):
    """A participant's answer to one instructional attention check of their batch."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="checks")
    # The number of items rated before it: the check's place in the batch.
    position = models.PositiveIntegerField()
    # Which check of the bank (`panels.checks.BANK`) was shown.
    check_key = models.CharField(max_length=40)
    chosen = models.CharField(max_length=40)
    passed = models.BooleanField()
    answered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "position"], name="one_check_answer_per_position"
            )
        ]

    def __str__(self):
        return (
            f"{self.participant_id} check {self.position}: {'passed' if self.passed else 'failed'}"
        )


class WebhookEvent(models.Model):
    """A status event the panel sent, kept once by its id: a redelivered event is
    recognised and changes nothing a second time."""

    provider = models.CharField(max_length=20, choices=Provider)
    event_id = models.CharField(max_length=128)
    event_type = models.CharField(max_length=64)
    # The panel's submission (Prolific: the SESSION_ID the link carried) and its status.
    resource_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=32, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    # What the event did here, in a few words ("returned", "unknown submission", ...).
    outcome = models.CharField(max_length=64, blank=True)

    class Meta:
        verbose_name = _("webhook event")
        verbose_name_plural = _("webhook events")
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "event_id"], name="one_webhook_event_per_id"
            )
        ]

    def __str__(self):
        return f"{self.provider} {self.event_type} {self.event_id}"
