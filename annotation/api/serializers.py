from rest_framework import serializers

from dialogues.models import Answer, Character, Scenario, Source

from ..models import Item, Judgment, Rating, Study


class SourceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Source
        fields = ["slug", "kind", "display_name"]


class CharacterSerializer(serializers.ModelSerializer):
    class Meta:
        model = Character
        fields = ["id", "key", "work_zh", "name_zh", "work_en", "name_en"]


class ScenarioSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scenario
        fields = ["number", "question", "persona_group"]


class AnswerSerializer(serializers.ModelSerializer):
    character = serializers.SlugRelatedField(slug_field="key", read_only=True)
    scenario = serializers.IntegerField(source="scenario.number", read_only=True)
    source = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Answer
        fields = ["id", "character", "scenario", "source", "round", "question", "text"]


class StudySerializer(serializers.ModelSerializer):
    reference_source = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    compared_sources = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    characters = serializers.SlugRelatedField(slug_field="key", many=True, read_only=True)
    items = serializers.IntegerField(source="item_count", read_only=True)

    class Meta:
        model = Study
        fields = [
            "slug",
            "name",
            "status",
            "design",
            "reference_source",
            "compared_sources",
            "characters",
            "rounds",
            "overlap",
            "include_diversity",
            "ask_human_guess",
            "items",
            "created_at",
        ]


class ItemSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    character = serializers.SlugRelatedField(slug_field="key", read_only=True)
    scenario = serializers.IntegerField(
        source="scenario.number", read_only=True, allow_null=True, default=None
    )
    answers = serializers.SerializerMethodField()

    class Meta:
        model = Item
        fields = [
            "id",
            "study",
            "kind",
            "character",
            "scenario",
            "round",
            "judgment_count",
            "is_gold",
            "answers",
        ]

    def get_answers(self, item: Item) -> list[dict]:
        return [
            {"slot": s.slot, "answer": s.answer_id, "source": s.answer.source.slug}
            for s in item.slots.all()
        ]


class JudgmentSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(source="item.study", slug_field="slug", read_only=True)
    annotator = serializers.CharField(
        source="annotator.annotator_profile.pseudonym", read_only=True
    )
    preference = serializers.SerializerMethodField()
    left_source = serializers.SlugRelatedField(
        source="assignment.left_source", slug_field="slug", read_only=True
    )
    right_source = serializers.SlugRelatedField(
        source="assignment.right_source", slug_field="slug", read_only=True
    )

    class Meta:
        model = Judgment
        fields = [
            "id",
            "study",
            "item",
            "annotator",
            "submitted_at",
            "seconds_on_task",
            "preference",
            "left_source",
            "right_source",
            "comment",
            "excluded",
            "simulated",
        ]

    def get_preference(self, judgment: Judgment) -> str:
        if judgment.is_tie:
            return "tie"
        preferred = judgment.preferred_answer  # None, without a query, when there is none
        return preferred.source.slug if preferred is not None else ""


class RatingSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(
        source="judgment.item.study", slug_field="slug", read_only=True
    )
    item = serializers.IntegerField(source="judgment.item_id", read_only=True)
    annotator = serializers.CharField(
        source="judgment.annotator.annotator_profile.pseudonym", read_only=True
    )
    source = serializers.SlugRelatedField(
        source="answer.source", slug_field="slug", read_only=True, allow_null=True
    )
    metric = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Rating
        fields = [
            "id",
            "study",
            "item",
            "judgment",
            "annotator",
            "answer",
            "source",
            "metric",
            "value",
        ]
