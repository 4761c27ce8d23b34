from django.contrib import admin

from . import selectors, services
from .forms import PanelStudyForm
from .models import PanelStudy, Participant


@admin.register(PanelStudy)
class PanelStudyAdmin(admin.ModelAdmin):
    form = PanelStudyForm
    list_display = ["study", "provider", "items_per_participant", "minutes", "places", "is_open"]
    list_filter = ["provider", "is_open"]

    def get_readonly_fields(self, request, obj=None):
        # A panel study stays with its study; a new one is configured for another study.
        return ["study"] if obj is not None else []

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
