"""The audit trail and the workers' heartbeats: read-only records."""

from django.contrib import admin

from ..models import AuditEvent, WorkerHeartbeat


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


admin.site.register(WorkerHeartbeat, list_display=["hostname", "seen_at"])
