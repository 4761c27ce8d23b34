"""Judge runs and calls in the Django admin, to read only: what a judge was asked and
said is evidence, changed by running the judge again, never by hand."""

from django.contrib import admin

from .models import JudgeCall, JudgeRun


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(JudgeRun)
class JudgeRunAdmin(ReadOnly):
    list_display = ["model", "study", "language", "temperature", "both_orders", "status"]
    list_filter = ["status", "language", "study"]
    search_fields = ["model", "study__slug"]
    exclude = ["figures"]


@admin.register(JudgeCall)
class JudgeCallAdmin(ReadOnly):
    list_display = ["run", "item", "order", "status", "attempts", "latency_ms", "updated_at"]
    list_filter = ["status", "order", "run"]
    list_select_related = ["run", "run__study", "item", "item__study"]
    raw_id_fields = ["item", "left_answer", "right_answer", "preferred_answer"]
