from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from . import services
from .models import (
    AnnotatorProfile,
    Assignment,
    Item,
    Judgment,
    Metric,
    Qualification,
    Rating,
    ScreeningQuestion,
    Study,
    WorkerHeartbeat,
)


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ["position", "slug", "dimension", "label_zh", "label_en"]
    list_display_links = ["slug"]
    ordering = ["position"]


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
    readonly_fields = ["quiz_score", "quiz_attempts", "roleplay_sample"]


@admin.register(AnnotatorProfile)
class AnnotatorProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "status", "consented_at", "pseudonym"]
    list_filter = ["status"]
    search_fields = ["user__email", "pseudonym"]
    inlines = [QualificationInline]


@admin.register(Qualification)
class QualificationAdmin(admin.ModelAdmin):
    """The screening review queue until the staff pages exist: filter by 'Quiz passed'."""

    list_display = ["profile", "character", "status", "quiz_score", "quiz_attempts", "reviewed_by"]
    list_filter = ["status", "character"]
    search_fields = ["profile__user__email"]
    readonly_fields = [
        "quiz_score",
        "quiz_attempts",
        "roleplay_sample",
        "reviewed_by",
        "reviewed_at",
    ]
    actions = ["approve", "reject"]

    def _review(self, request, queryset, approve):
        for qualification in queryset.select_related("profile"):
            services.qualification_review(
                qualification=qualification, reviewer=request.user, approve=approve
            )
        self.message_user(request, _("%(n)d reviewed.") % {"n": queryset.count()}, messages.SUCCESS)

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


admin.site.register(
    ScreeningQuestion,
    list_display=["character", "prompt_zh", "correct_choice", "active"],
    list_filter=["character", "active"],
)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "status", "reference_source", "overlap"]
    list_filter = ["status"]
    filter_horizontal = ["compared_sources", "characters", "scenarios"]
    actions = ["open_study"]

    @admin.action(description=_("Open (generates items on first opening)"))
    def open_study(self, request, queryset):
        for study in queryset:
            count = services.study_open(study=study)
            self.message_user(
                request, _("%(study)s is open with %(n)d items.") % {"study": study, "n": count}
            )


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "study",
        "kind",
        "character",
        "scenario",
        "round",
        "judgment_count",
        "is_gold",
    ]
    list_filter = ["study", "kind", "round", "is_gold"]
    list_select_related = ["study", "character", "scenario"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["pk", "annotator", "item", "state", "served_at", "expires_at"]
    list_filter = ["state"]
    list_select_related = ["annotator", "item__study"]


class RatingInline(admin.TabularInline):
    model = Rating
    extra = 0
    readonly_fields = ["answer", "metric", "value"]
    can_delete = False


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "annotator",
        "item",
        "submitted_at",
        "seconds_on_task",
        "is_tie",
        "excluded",
    ]
    list_filter = ["excluded", "item__study"]
    list_select_related = ["annotator", "item__study"]
    readonly_fields = [
        "item",
        "annotator",
        "assignment",
        "submitted_at",
        "seconds_on_task",
        "preferred_answer",
        "is_tie",
        "human_guess",
        "human_guess_asked",
        "comment",
    ]
    inlines = [RatingInline]


admin.site.register(WorkerHeartbeat, list_display=["hostname", "seen_at"])
