from django.contrib import admin, messages
from django.shortcuts import render
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from common.forms import attempt

from . import checks, selectors, services
from .forms import CheckVoidForm, PanelStudyForm
from .models import PanelStudy, Participant, WebhookEvent


@admin.register(PanelStudy)
class PanelStudyAdmin(admin.ModelAdmin):
    form = PanelStudyForm
    list_display = ["study", "provider", "items_per_participant", "minutes", "places", "is_open"]
    list_filter = ["provider", "is_open"]
    actions = ["void_check"]

    def get_readonly_fields(self, request, obj=None):
        # A panel study stays with its study; a new one is configured for another study.
        return ["study", "attention_checks"] if obj is not None else []

    @admin.display(description=_("attention checks so far"))
    def attention_checks(self, obj):
        rows = [
            (
                result.key,
                result.shown,
                result.failed,
                _("set aside as unclear") if result.voided else "",
            )
            for result in selectors.check_results(obj).values()
        ]
        return format_html(
            "<table><tr><th>{}</th><th>{}</th><th>{}</th><th></th></tr>{}</table>",
            _("attention check"),
            _("answered"),
            _("failed"),
            format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows),
        )

    @admin.action(description=_("Set an attention check aside as unclear (asks which and why)"))
    def void_check(self, request, queryset):
        """Ask for the check and the reason on an intermediate page, then void it in the
        one panel study chosen."""
        if queryset.count() != 1:
            self.message_user(request, _("Choose one panel study."), messages.ERROR)
            return None
        panel = queryset.get()
        form = CheckVoidForm(request.POST if "apply" in request.POST else None)
        if form.is_bound:
            error, _voided = attempt(
                form,
                lambda cleaned: services.check_void(
                    panel_study=panel,
                    check_key=cleaned["check"],
                    actor=request.user,
                    reason=cleaned["reason"],
                ),
            )
            if error is None:
                self.message_user(
                    request,
                    _("Failing the check %(key)s no longer counts in this study.")
                    % {"key": form.cleaned_data["check"]},
                    messages.SUCCESS,
                )
                return None
            self.message_user(request, error, messages.ERROR)
        return render(
            request,
            "admin/panels/panelstudy/void_check.html",
            {
                **self.admin_site.each_context(request),
                "title": _("Set an attention check aside as unclear"),
                "panel": panel,
                "form": form,
                "bank": checks.BANK,
                "results": selectors.check_results(panel),
                "action": request.POST["action"],
            },
        )

    def save_model(self, request, obj, form, change):
        # Through the service, so that the change is audited like every staff write.
        panel = services.panel_configure(
            study=obj.study,
            actor=request.user,
            **{name: form.cleaned_data[name] for name in services.SETTINGS},
        )
        obj.pk = panel.pk


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    """Participants by state and code. The panel id is for paying people through the
    panel: only those who pay (superusers, or the permission to pay participants) see it
    or find people by it."""

    list_display = ["user", "panel_study", "state", "code", "started_at", "finished_at"]
    list_filter = ["panel_study", "state"]

    def _pays(self, request) -> bool:
        return selectors.pays_participants(request.user)

    def get_list_display(self, request):
        if self._pays(request):
            return [*self.list_display, "pid"]
        return self.list_display

    def get_search_fields(self, request):
        return ["pid"] if self._pays(request) else []

    def get_fields(self, request, obj=None):
        hidden = {"pid_hash"} if self._pays(request) else {"pid", "pid_hash"}
        return [f.name for f in Participant._meta.fields if f.name not in hidden | {"id"}]

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    def has_add_permission(self, request):
        return False


@admin.register(WebhookEvent)
class WebhookEventAdmin(admin.ModelAdmin):
    """The panel's status events as they came, and what each did here: read-only, the
    record of what the panel told us."""

    list_display = ["received_at", "provider", "event_type", "status", "resource_id", "outcome"]
    list_filter = ["provider", "status", "outcome"]
    search_fields = ["resource_id", "event_id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
