"""Annotators and their screening decisions per character."""

from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from common.site import site_url

from .. import services
from ..models import AnnotatorProfile, Qualification


class QualificationInline(admin.TabularInline):
    model = Qualification
    extra = 0
    fields = [
        "character",
        "status",
        "quiz_score",
        "quiz_attempts",
        "roleplay_sample",
        "review_note",
    ]
    # Decisions go through the review (audited, emailed): the staff screening page or
    # the Qualification actions.
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(AnnotatorProfile)
class AnnotatorProfileAdmin(admin.ModelAdmin):
    """Suspending and reinstating happen on the staff annotator pages, with a reason
    and an audit record; here the standing is read-only."""

    list_display = ["user", "status", "consented_at", "pseudonym"]
    list_filter = ["status"]
    search_fields = ["user__email", "pseudonym"]
    readonly_fields = ["status", "why_suspended", "consented_at", "pseudonym", "simulated"]
    exclude = ["paused_reason", "automatic_pause"]
    inlines = [QualificationInline]

    @admin.display(description=_("why suspended"))
    def why_suspended(self, profile):
        return profile.pause_description


@admin.register(Qualification)
class QualificationAdmin(admin.ModelAdmin):
    """The screening review queue until the staff pages exist: filter by 'Quiz passed'."""

    list_display = ["profile", "character", "status", "quiz_score", "quiz_attempts", "reviewed_by"]
    list_filter = ["status", "character"]
    search_fields = ["profile__user__email"]
    readonly_fields = [
        "status",
        "quiz_score",
        "quiz_attempts",
        "roleplay_sample",
        "reviewed_by",
        "reviewed_at",
        "review_note",
    ]
    actions = ["approve", "reject"]

    def _review(self, request, queryset, approve):
        try:
            reviewed = services.qualifications_review(
                qualifications=list(queryset),
                reviewer=request.user,
                approve=approve,
                site_url=site_url(request),
            )
        except services.AnnotationError as refusal:
            self.message_user(request, refusal.message, messages.ERROR)
            return
        self.message_user(request, _("%(n)d reviewed.") % {"n": len(reviewed)}, messages.SUCCESS)

    @admin.action(description=_("Approve for these characters"))
    def approve(self, request, queryset):
        self._review(request, queryset, approve=True)

    @admin.action(description=_("Reject for these characters"))
    def reject(self, request, queryset):
        self._review(request, queryset, approve=False)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("profile__user", "character", "reviewed_by")
        )
