from django.contrib import admin

from . import services
from .models import CharacterProfile, WriterApplication, WritingRun, WritingTask


@admin.register(WritingRun)
class WritingRunAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "followup_mode", "deadline", "status"]
    filter_horizontal = ["characters", "scenarios"]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Every character x scenario cell of the run is a task to write.
        services.tasks_create_missing(run=form.instance)


@admin.register(WritingTask)
class WritingTaskAdmin(admin.ModelAdmin):
    list_display = ["run", "character", "scenario", "state", "writer"]
    list_filter = ["run", "state"]
    readonly_fields = [field.name for field in WritingTask._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(WriterApplication)
class WriterApplicationAdmin(admin.ModelAdmin):
    list_display = ["user", "character", "status", "created_at"]
    list_filter = ["status"]


@admin.register(CharacterProfile)
class CharacterProfileAdmin(admin.ModelAdmin):
    list_display = ["character"]
