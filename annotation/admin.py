from django import forms
from django.contrib import admin, messages
from django.shortcuts import render
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from . import selectors, services
from .models import (
    AnnotatorProfile,
    Assignment,
    AuditEvent,
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
    StudyMembership,
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
                qualifications=list(queryset), reviewer=request.user, approve=approve
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


CHOICE_SLOTS = 6


class _ScreeningQuestionFormBase(forms.ModelForm):
    """The choices as one Chinese and one English field each, and the right one picked
    from a list, instead of hand-edited JSON."""

    correct_choice = forms.TypedChoiceField(
        label=_("right choice"),
        coerce=int,
        choices=[(i, _("Choice %(n)d") % {"n": i + 1}) for i in range(CHOICE_SLOTS)],
    )

    class Meta:
        model = ScreeningQuestion
        fields = ["character", "prompt_zh", "prompt_en", "correct_choice", "active"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        stored = list(self.instance.choices or []) if self.instance.pk else []
        for i in range(CHOICE_SLOTS):
            choice = stored[i] if i < len(stored) else {}
            for language, label in (("zh", _("Chinese")), ("en", _("English"))):
                name = f"choice_{i}_{language}"
                self.fields[name].label = _("Choice %(n)d (%(language)s)") % {
                    "n": i + 1,
                    "language": label,
                }
                self.initial.setdefault(name, choice.get(language, ""))

    def clean(self):
        cleaned = super().clean()
        choices = []
        for i in range(CHOICE_SLOTS):
            zh = cleaned.get(f"choice_{i}_zh", "").strip()
            en = cleaned.get(f"choice_{i}_en", "").strip()
            if en and not zh:
                self.add_error(f"choice_{i}_zh", _("A choice needs its Chinese text."))
            if zh:
                if choices and len(choices) != i:
                    self.add_error(f"choice_{i}_zh", _("Fill the choices in order, without gaps."))
                choices.append({"zh": zh, "en": en})
        if len(choices) < 2:
            raise forms.ValidationError(_("A question needs at least two choices."))
        correct = cleaned.get("correct_choice")
        if correct is not None and correct >= len(choices):
            self.add_error("correct_choice", _("The right choice must be one of the filled ones."))
        self.instance.choices = choices
        return cleaned


# The admin only shows fields declared on the form class, so the choice fields are
# declared here rather than added per instance.
ScreeningQuestionForm = type(
    "ScreeningQuestionForm",
    (_ScreeningQuestionFormBase,),
    {
        f"choice_{i}_{language}": forms.CharField(required=False, max_length=500)
        for i in range(CHOICE_SLOTS)
        for language in ("zh", "en")
    },
)


@admin.register(ScreeningQuestion)
class ScreeningQuestionAdmin(admin.ModelAdmin):
    """Staff keep the quiz bank here; `load_screening_questions` adds the bundled
    questions without touching the ones edited here."""

    form = ScreeningQuestionForm
    list_display = ["prompt_zh", "character", "right_answer", "active"]
    list_filter = ["active", "character__work_zh", "character"]
    list_editable = ["active"]
    search_fields = ["prompt_zh", "prompt_en", "character__name_zh", "character__name_en"]
    list_select_related = ["character"]
    fieldsets = [
        (None, {"fields": ["character", "prompt_zh", "prompt_en", "active"]}),
        (
            _("Choices"),
            {
                "fields": [(f"choice_{i}_zh", f"choice_{i}_en") for i in range(CHOICE_SLOTS)]
                + ["correct_choice"]
            },
        ),
    ]

    @admin.display(description=_("right answer"))
    def right_answer(self, question):
        choices = question.choices or []
        if 0 <= question.correct_choice < len(choices):
            return choices[question.correct_choice].get("zh", "")
        return "—"


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "status", "design", "reference_source", "overlap"]
    list_filter = ["status", "design"]
    filter_horizontal = ["compared_sources", "characters", "scenarios"]
    readonly_fields = ["capacity"]
    actions = ["open_study"]

    def get_readonly_fields(self, request, obj=None):
        # Opening generates items, so the status changes through the action or the
        # dashboard, never by editing the field.
        return [*self.readonly_fields, "status"] if obj is not None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        fields = [f for f in form.changed_data if f in form.base_fields]
        before = {}
        if change:
            stored = Study.objects.get(pk=obj.pk)
            before = {f: _plain(getattr(stored, f, None)) for f in fields}
        super().save_model(request, obj, form, change)
        # Many-to-many fields are saved later, in save_related; the audit waits for them.
        request._study_audit = (before, fields)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        before, fields = getattr(request, "_study_audit", ({}, []))
        study = form.instance
        if change:
            after = {f: _plain(getattr(study, f, None)) for f in fields}
            services.study_change_record(
                study=study, actor=request.user, before=before, after=after
            )
        else:
            services.study_created_record(study=study, actor=request.user)

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
            count = services.study_open(study=study, actor=request.user)
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

    def save_model(self, request, obj, form, change):
        before = Item.objects.filter(pk=obj.pk).values_list("is_gold", flat=True).first()
        super().save_model(request, obj, form, change)
        if change and before != obj.is_gold:
            services.item_gold_record(item=obj, actor=request.user, before=before)

    def save_related(self, request, form, formsets, change):
        before = services.gold_expectations_of(form.instance)
        super().save_related(request, form, formsets, change)
        services.gold_expectations_record(item=form.instance, actor=request.user, before=before)


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


@admin.register(StudyMembership)
class StudyMembershipAdmin(admin.ModelAdmin):
    """Read-only here: assignment changes are made (and audited) on the staff pages."""

    list_display = ["study", "annotator", "cap", "added_at"]
    list_filter = ["study"]
    list_select_related = ["study", "annotator"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """The audit trail, read-only: it is evidence and is never edited or deleted."""

    list_display = ["at", "actor_label", "action", "target_type", "target_label", "study", "note"]
    list_filter = ["action", "study"]
    search_fields = ["actor_label", "target_label", "note"]
    list_select_related = ["study"]
    date_hierarchy = "at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _plain(value):
    """A field's value as JSON-friendly data: related sets become sorted primary keys."""
    if hasattr(value, "all") and hasattr(value, "model"):
        return sorted(value.all().values_list("pk", flat=True))
    if hasattr(value, "pk"):
        return value.pk
    return value


admin.site.register(WorkerHeartbeat, list_display=["hostname", "seen_at"])
