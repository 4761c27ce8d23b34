from django.contrib import admin

from .models import Answer, Character, Scenario, Source


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ["key", "work_zh", "name_zh", "work_en", "name_en"]
    search_fields = ["key", "work_zh", "name_zh", "work_en", "name_en"]
    list_editable = ["work_en", "name_en"]


@admin.register(Scenario)
class ScenarioAdmin(admin.ModelAdmin):
    list_display = ["number", "persona_group", "question"]
    list_filter = ["persona_group"]
    search_fields = ["question"]


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["slug", "kind", "display_name"]
    list_filter = ["kind"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["character", "scenario_number", "source", "round", "text"]
    list_filter = ["source", "round", "character"]
    search_fields = ["text", "question"]
    list_select_related = ["character", "scenario", "source"]
    raw_id_fields = ["character", "scenario", "source"]

    @admin.display(ordering="scenario__number", description="scenario")
    def scenario_number(self, answer):
        return answer.scenario.number
