"""Studies and what they are made of: metrics, items (gold ones with their expected
ranges) and who takes part. Every change to a study or a gold item is audited."""

from django import forms
from django.contrib import admin
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from dialogues.models import Answer
from dialogues.selectors import source_shown_name

from .. import selectors, services
from ..models import GoldExpectation, Item, ItemKind, Metric, Study, StudyMembership


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ["position", "slug", "dimension", "label_zh", "label_en"]
    list_display_links = ["slug"]
    ordering = ["position"]


class StudyAdminForm(forms.ModelForm):
    """The admin's study form with the rules `create_study` keeps: rounds are ticked, not
    typed as JSON (an empty list, the field's default, made a study without items), and
    the reference is not also a compared source (opening would drop it without a word)."""

    rounds = forms.TypedMultipleChoiceField(
        label=_("Rounds"),
        choices=[(1, _("Round 1")), (2, _("Round 2"))],
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        initial=[1, 2],
        error_messages={"required": _("Choose round 1, round 2 or both.")},
    )

    class Meta:
        model = Study
        # The admin chooses the fields it shows (its fieldsets); the form only refines some.
        # Compared sources, characters and status are named by the model's fields (the
        # admin's two-list pickers read the field's name, not the form's label).
        fields = "__all__"  # noqa: DJ007
        labels = {
            "slug": _("Slug (the study's address)"),
            "name": _("Name"),
            "reference_source": _("Reference source"),
            "scenarios": _("Scenarios (none: all)"),
            "overlap": _("Annotators per item"),
            "design": _("Pairing design"),
            "include_diversity": _("Include diversity sets"),
            "diversity_set_size": _("Answers per diversity set"),
            "ask_human_guess": _("Ask which answer a fan wrote"),
            "screening_pass_mark": _("Screening pass mark (share of quiz answers right)"),
            "lease_minutes": _("Lease minutes (how long an item stays reserved)"),
            "break_every_items": _("Suggest a break every so many items"),
            "break_every_minutes": _("Suggest a break every so many minutes"),
            "cap_per_annotator": _("Cap per annotator"),
            "cap_per_annotator_per_day": _("Cap per annotator per day"),
            "balance_characters": _("Balance characters"),
            "gold_rate": _("Gold item rate"),
            "min_seconds_per_item": _("Minimum seconds per item"),
            "flag_straight_lining": _("Flag straight-lining (the same value everywhere)"),
            "low_agreement_threshold": _("Low-agreement threshold"),
            "low_agreement_min_units": _("Ratings before agreement is judged"),
            "pause_after_flags": _("Pause an annotator after so many flags"),
        }

    def clean(self):
        cleaned = super().clean()
        reference = cleaned.get("reference_source")
        compared = cleaned.get("compared_sources")
        if reference is not None and compared is not None and reference in compared:
            self.add_error(
                "compared_sources",
                _("The reference source (%(source)s) cannot also be a compared source.")
                % {"source": reference},
            )
        return cleaned

    def clean_rounds(self):
        return sorted(set(self.cleaned_data["rounds"]))


DESIGN_FIELDS = [
    "reference_source",
    "compared_sources",
    "characters",
    "scenarios",
    "rounds",
    "design",
    "include_diversity",
    "diversity_set_size",
]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyAdminForm
    list_display = ["slug", "name", "status", "design", "reference_source", "overlap"]
    list_filter = ["status", "design"]
    filter_horizontal = ["compared_sources", "characters", "scenarios"]
    readonly_fields = ["capacity"]
    actions = ["open_study"]

    def get_readonly_fields(self, request, obj=None):
        # Opening generates items, so the status changes through the action or the
        # dashboard, never by editing the field.
        if obj is None:
            return self.readonly_fields
        if obj.items.exists():
            # The items were made from these once, on opening: a character or source
            # added later would get no items, one removed would keep its own.
            return [*self.readonly_fields, "status", *DESIGN_FIELDS, "design_fixed"]
        return [*self.readonly_fields, "status"]

    @admin.display(description=_("design"))
    def design_fixed(self, study):
        return _(
            "Fixed once the study is opened: its items were made from its sources, "
            "characters, scenarios, rounds and design. Create a new study for another design."
        )

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


def _plain(value):
    """A field's value as JSON-friendly data: related sets become sorted primary keys."""
    if hasattr(value, "all") and hasattr(value, "model"):
        return sorted(value.all().values_list("pk", flat=True))
    if hasattr(value, "pk"):
        return value.pk
    return value


class GoldExpectationInline(admin.TabularInline):
    """A gold item's expected ranges, on its own answers (or all of them, left empty) and
    on metrics of its kind only: a range on another item's answer, typed as a bare id, or
    on the diversity scale of a pair matched no rating, and the check passed everyone."""

    model = GoldExpectation
    extra = 1

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        fields = formset.form.base_fields
        answers = Answer.objects.none()
        # A diversity set is rated as a whole (its ratings name no answer): only "all"
        # can match them.
        if obj is not None and obj.kind != ItemKind.DIVERSITY:
            answers = Answer.objects.filter(pk__in=obj.slots.values("answer_id")).select_related(
                "source"
            )
        if obj is not None:
            fields["metric"].queryset = Metric.objects.filter(
                for_diversity=obj.kind == ItemKind.DIVERSITY
            )
        fields["answer"].queryset = answers
        fields["answer"].label_from_instance = _answer_choice
        # Choosing an answer here must not add or edit one (the rated texts).
        widget = fields["answer"].widget
        widget.can_add_related = widget.can_change_related = widget.can_view_related = False
        return formset


def _answer_choice(answer) -> str:
    # Short, so that the ranges' columns fit beside it: the page lists the texts above.
    return f"#{answer.pk} {source_shown_name(answer.source.display_name)}"


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
    fields = [
        "study",
        "kind",
        "character",
        "scenario",
        "round",
        "shown_answers",
        "judgment_count",
        "is_gold",
    ]
    # All but the gold flag: the item itself was made by opening the study.
    readonly_fields = [name for name in fields if name != "is_gold"]
    inlines = [GoldExpectationInline]

    # Not named `answers`: the model's own field of that name would be shown instead.
    @admin.display(description=_("answers"))
    def shown_answers(self, item):
        """What the item shows, so that its expected ranges can be chosen knowingly."""
        slots = item.slots.select_related("answer__source").order_by("slot")
        return format_html_join(
            "",
            "<p><strong>#{} {}</strong><br>{}</p>",
            (
                (s.answer_id, source_shown_name(s.answer.source.display_name), s.answer.text)
                for s in slots
            ),
        )

    def save_model(self, request, obj, form, change):
        before = Item.objects.filter(pk=obj.pk).values_list("is_gold", flat=True).first()
        super().save_model(request, obj, form, change)
        if change and before != obj.is_gold:
            services.item_gold_record(item=obj, actor=request.user, before=before)

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        services.character_progress_recount_later(study=obj.study, character_ids=[obj.character_id])

    def delete_queryset(self, request, queryset):
        affected: dict[int, set[int]] = {}
        for study_id, character_id in queryset.values_list("study_id", "character_id"):
            affected.setdefault(study_id, set()).add(character_id)
        super().delete_queryset(request, queryset)
        for study in Study.objects.filter(pk__in=affected):
            services.character_progress_recount_later(
                study=study, character_ids=sorted(affected[study.pk])
            )

    def save_related(self, request, form, formsets, change):
        before = services.gold_expectations_of(form.instance)
        super().save_related(request, form, formsets, change)
        services.gold_expectations_record(item=form.instance, actor=request.user, before=before)


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
