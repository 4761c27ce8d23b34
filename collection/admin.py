from django.contrib import admin
from django.db.models import Max
from django.utils.translation import gettext_lazy as _

from .models import (
    AnswerEdit,
    ApiCall,
    CharacterPrompt,
    CollectionRun,
    GeneratedAnswer,
    ModelEndpoint,
)


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(admin.ModelAdmin):
    list_display = ["name", "source_slug", "base_url", "model", "concurrency", "rate_per_minute"]
    search_fields = ["name", "source_slug", "model"]
    fieldsets = [
        (None, {"fields": ["name", "source_slug", "base_url", "model"]}),
        (_("Parameters"), {"fields": ["temperature", "max_tokens", "top_p", "timeout_seconds"]}),
        (_("Limits"), {"fields": ["concurrency", "rate_per_minute"]}),
        (
            _("API key (named here, read when calling; never stored)"),
            {"fields": ["api_key_env", "api_key_file"]},
        ),
    ]


@admin.register(CharacterPrompt)
class CharacterPromptAdmin(admin.ModelAdmin):
    """Saving a change adds a new version: answers keep pointing at the prompt they used."""

    list_display = ["character", "version", "created_at", "created_by"]
    list_filter = ["character"]
    readonly_fields = ["version", "created_at", "created_by"]
    fields = ["character", "template", "version", "created_at", "created_by"]

    def save_model(self, request, obj, form, change):
        newest = (
            CharacterPrompt.objects.filter(character=obj.character).aggregate(v=Max("version"))["v"]
            or 0
        )
        obj.pk = None
        obj._state.adding = True
        obj.version = newest + 1
        obj.created_by = request.user
        obj.save()

    def has_delete_permission(self, request, obj=None):
        return obj is None or not obj.answers.exists()


@admin.register(CollectionRun)
class CollectionRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "source", "endpoint", "status", "created_at"]
    list_filter = ["status"]
    readonly_fields = [field.name for field in CollectionRun._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(GeneratedAnswer)
class GeneratedAnswerAdmin(admin.ModelAdmin):
    """Read-only: review happens on the run's staff page, where edits are audited."""

    list_display = ["source", "character", "scenario", "round", "review_status", "finish_reason"]
    list_filter = ["review_status", "source", "round"]
    search_fields = ["text"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ApiCall)
class ApiCallAdmin(admin.ModelAdmin):
    list_display = ["created_at", "endpoint", "purpose", "outcome", "status_code", "latency_ms"]
    list_filter = ["outcome", "endpoint"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(AnswerEdit)
class AnswerEditAdmin(admin.ModelAdmin):
    list_display = ["created_at", "cell", "action", "editor"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
