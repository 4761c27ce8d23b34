"""Leases, judgments and quality flags: evidence, so read-only but for the audited
decisions (exclude or include a judgment, mark a flag reviewed)."""

from django.contrib import admin, messages
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from .. import services
from ..models import Assignment, Judgment, JudgmentDecision, QualityFlag, Rating


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
        # Exclusion changes only through the actions below, which record who and why.
        "excluded",
        "simulated",
    ]
    inlines = [RatingInline, JudgmentDecisionInline]

    def has_delete_permission(self, request, obj=None):
        # A submitted judgment is evidence: it is excluded (with a reason), never deleted.
        return False

    def _decide(self, request, queryset, excluded: bool, title):
        """Ask for the reason on an intermediate page, then record one decision each."""
        reason = request.POST.get("reason", "").strip()
        if "apply" in request.POST and reason:
            for judgment in queryset:
                services.judgment_exclude(
                    judgment=judgment, decided_by=request.user, reason=reason, excluded=excluded
                )
            n = len(queryset)  # the judgments just decided, read once above
            self.message_user(
                request,
                ngettext("%(n)d judgment updated.", "%(n)d judgments updated.", n) % {"n": n},
                messages.SUCCESS,
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
    list_display = ["created_at", "annotator", "study", "kind", "found", "judgment", "resolved_at"]
    list_filter = ["kind", "study", ("resolved_at", admin.EmptyFieldListFilter)]
    list_select_related = ["annotator", "study"]
    readonly_fields = [
        "annotator",
        "study",
        "kind",
        "judgment",
        "found",
        "created_at",
        "resolved_by",
        "resolved_at",
    ]
    actions = ["resolve"]

    @admin.display(description=_("what was found"))
    def found(self, flag):
        return flag.description

    @admin.action(description=_("Mark as reviewed"))
    def resolve(self, request, queryset):
        for flag in queryset.filter(resolved_at__isnull=True):
            services.flag_resolve(flag=flag, resolved_by=request.user)
