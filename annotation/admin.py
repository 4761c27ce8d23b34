from django.contrib import admin, messages
from django.shortcuts import render
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from . import selectors, services
from .models import (
    AnnotatorProfile,
    Assignment,
    GoldExpectation,
    Item,
    Judgment,
    JudgmentDecision,
    Metric,
    Qualification,
    QualityFlag,
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
    list_display = ["slug", "name", "status", "design", "reference_source", "overlap"]
    list_filter = ["status", "design"]
    filter_horizontal = ["compared_sources", "characters", "scenarios"]
    readonly_fields = ["capacity"]
    actions = ["open_study"]

    @admin.display(description=_("approved annotators per character (needed / approved)"))
    def capacity(self, study):
        if study.pk is None:
            return "-"
        rows = selectors.study_capacity(study)
        return format_html_join(
            "", "<div>{}: {} / {}</div>", ((r.character.key, r.needed, r.approved) for r in rows)
        )

    @admin.action(description=_("Open (generates items on first opening)"))
    def open_study(self, request, queryset):
        for study in queryset:
            count = services.study_open(study=study)
            self.message_user(
                request, _("%(study)s is open with %(n)d items.") % {"study": study, "n": count}
            )


class GoldExpectationInline(admin.TabularInline):
    model = GoldExpectation
    extra = 1
    raw_id_fields = ["answer"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    """Staff mark gold / attention-check items here and give the expected ranges."""

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
    fields = ["study", "kind", "character", "scenario", "round", "judgment_count", "is_gold"]
    readonly_fields = ["study", "kind", "character", "scenario", "round", "judgment_count"]
    inlines = [GoldExpectationInline]


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


class JudgmentDecisionInline(admin.TabularInline):
    model = JudgmentDecision
    extra = 0
    readonly_fields = ["excluded", "reason", "decided_by", "decided_at"]
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


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
    inlines = [RatingInline, JudgmentDecisionInline]

    def _decide(self, request, queryset, excluded: bool, title):
        """Ask for the reason on an intermediate page, then record one decision each."""
        reason = request.POST.get("reason", "").strip()
        if "apply" in request.POST and reason:
            for judgment in queryset:
                services.judgment_exclude(
                    judgment=judgment, decided_by=request.user, reason=reason, excluded=excluded
                )
            self.message_user(
                request, _("%(n)d judgment(s) updated.") % {"n": queryset.count()}, messages.SUCCESS
            )
            return None
        return render(
            request,
            "admin/annotation/judgment/decide.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "judgments": queryset,
                "action": request.POST["action"],
                "missing_reason": "apply" in request.POST,
            },
        )

    @admin.action(description=_("Exclude from results (asks why)"))
    def exclude_from_results(self, request, queryset):
        return self._decide(request, queryset, True, _("Exclude judgments from results"))

    @admin.action(description=_("Include in results again (asks why)"))
    def include_in_results(self, request, queryset):
        return self._decide(request, queryset, False, _("Include judgments in results"))


@admin.register(QualityFlag)
class QualityFlagAdmin(admin.ModelAdmin):
    list_display = ["created_at", "annotator", "study", "kind", "detail", "judgment", "resolved_at"]
    list_filter = ["kind", "study", ("resolved_at", admin.EmptyFieldListFilter)]
    list_select_related = ["annotator", "study"]
    readonly_fields = [
        "annotator",
        "study",
        "kind",
        "judgment",
        "detail",
        "created_at",
        "resolved_by",
        "resolved_at",
    ]
    actions = ["resolve"]

    @admin.action(description=_("Mark as reviewed"))
    def resolve(self, request, queryset):
        for flag in queryset.filter(resolved_at__isnull=True):
            services.flag_resolve(flag=flag, resolved_by=request.user)


admin.site.register(WorkerHeartbeat, list_display=["hostname", "seen_at"])
