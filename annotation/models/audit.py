"""The audit trail: who did what to whom, when, and what it looked like before and after."""

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class AuditAction(models.TextChoices):
    QUALIFICATION_APPROVE = "qualification.approve", _("Qualification approved")
    QUALIFICATION_REJECT = "qualification.reject", _("Qualification rejected")
    ANNOTATOR_SUSPEND = "annotator.suspend", _("Annotator suspended")
    ANNOTATOR_REINSTATE = "annotator.reinstate", _("Annotator reinstated")
    JUDGMENT_EXCLUDE = "judgment.exclude", _("Judgment excluded")
    JUDGMENT_INCLUDE = "judgment.include", _("Judgment included")
    FLAG_RESOLVE = "flag.resolve", _("Flag marked as reviewed")
    STUDY_CREATE = "study.create", _("Study created")
    STUDY_OPEN = "study.open", _("Study opened")
    STUDY_PAUSE = "study.pause", _("Study paused")
    STUDY_RESUME = "study.resume", _("Study resumed")
    STUDY_CLOSE = "study.close", _("Study closed")
    STUDY_STATUS = "study.status", _("Study status changed")
    STUDY_CHANGE = "study.change", _("Study settings changed")
    MEMBERSHIP_ADD = "membership.add", _("Annotator assigned to study")
    MEMBERSHIP_REMOVE = "membership.remove", _("Annotator removed from study")
    MEMBERSHIP_CAP = "membership.cap", _("Annotator's cap changed")
    # Fan writing and answer collection record their staff actions here too; the codes
    # are theirs (annotation imports neither app), the names are the trail's.
    WRITER_APPROVE = "writer.approve", _("Writer approved")
    WRITER_REJECT = "writer.reject", _("Writer rejected")
    WRITING_ACCEPT = "writing.accept", _("Dialogue accepted")
    WRITING_RETURN = "writing.return", _("Dialogue returned to the writer")
    WRITING_EDIT = "writing.edit", _("Dialogue edited by staff")
    COLLECTION_RUN_START = "collection.run_start", _("Collection run started")
    COLLECTION_RUN_PAUSE = "collection.run_pause", _("Collection run paused")
    COLLECTION_RUN_RESUME = "collection.run_resume", _("Collection run resumed")
    COLLECTION_RUN_CANCEL = "collection.run_cancel", _("Collection run cancelled")
    COLLECTION_ACCEPT = "collection.accept", _("Model answer accepted")
    COLLECTION_EDIT = "collection.edit", _("Model answer edited")
    COLLECTION_REGENERATE = "collection.regenerate", _("Model answer discarded and asked again")
    # The judges app's run controls, named here for the same reason.
    JUDGE_RUN_PAUSE = "judge.run_pause", _("Judge run paused")
    JUDGE_RUN_RESUME = "judge.run_resume", _("Judge run resumed")
    JUDGE_RUN_CANCEL = "judge.run_cancel", _("Judge run cancelled")
    # The panels app's staff action, named here for the same reason.
    PANEL_SETTINGS = "panel.settings", _("Panel settings changed")
    PANEL_OUTCOME = "panel.outcome", _("Panel participant's batch ended")
    PANEL_CHECK_VOID = "panel.check_void", _("Attention check set aside as unclear")
    PANEL_DECISION = "panel.decision", _("Panel submission decided")
    PANEL_BONUS = "panel.bonus", _("Panel bonus paid")
    PANEL_STUDY_ACTION = "panel.study_action", _("Panel study changed on the panel")


# Rows recorded before pauses, resumptions and closings had actions of their own: each
# such action's older rows were recorded as (action, the side that says so, its status).
# Shown by their names (`AuditEvent.action_name`) and found by them on the audit page
# (`selectors.audit_events`): the two read this one rule.
OLDER_NAMED = {
    AuditAction.STUDY_PAUSE: (AuditAction.STUDY_STATUS, "after", "paused"),
    AuditAction.STUDY_CLOSE: (AuditAction.STUDY_STATUS, "after", "closed"),
    AuditAction.STUDY_RESUME: (AuditAction.STUDY_OPEN, "before", "paused"),
}


class AuditEvent(models.Model):
    """One staff action, or an automatic one (no actor). Rows are only ever added: the
    trail is evidence, so nothing edits or deletes it, and it outlives what it names."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("who"),
    )
    # The actor's email at the time, so the trail still reads after an account is gone.
    actor_label = models.CharField(_("who"), max_length=254, blank=True)
    at = models.DateTimeField(_("when"), default=timezone.now, db_index=True)
    action = models.CharField(_("what"), max_length=40, choices=AuditAction)
    target_type = models.CharField(max_length=40)
    target_id = models.CharField(max_length=64)
    target_label = models.CharField(_("target"), max_length=300, blank=True)
    study = models.ForeignKey(
        "annotation.Study",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit_events",
    )
    before = models.JSONField(_("before"), default=dict, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(_("after"), default=dict, blank=True, encoder=DjangoJSONEncoder)
    note = models.TextField(_("note"), blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["study", "at"])]
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")

    def __str__(self):
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_label or 'system'} {self.action}"

    @property
    def action_name(self) -> str:
        """What happened, in the active language. Pauses, resumptions and closings were
        recorded as a status change and an opening before they had names of their own;
        those rows read by what their before and after say (`OLDER_NAMED`)."""
        for action, (recorded, side, status) in OLDER_NAMED.items():
            changed = getattr(self, side)
            if (
                self.action == recorded
                and isinstance(changed, dict)
                and changed.get("status") == status
            ):
                return str(action.label)
        return str(self.get_action_display())

    @property
    def reason(self) -> str:
        """The staff member's note or, for an automatic pause, why, in the active language."""
        if not self.note and isinstance(self.after, dict) and self.after.get("automatic_pause"):
            from .people import describe_automatic_pause

            return describe_automatic_pause(self.after["automatic_pause"])
        return self.note
