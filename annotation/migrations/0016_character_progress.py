"""Each study's judgments and items per character, kept by the submissions
(`CharacterProgress`), counted here for the studies made before."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce


def count_from_items(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    CharacterProgress = apps.get_model("annotation", "CharacterProgress")
    # As `services.character_progress_recount` counts: a row for every character with
    # items, gold ones left out of its figures.
    not_gold = Q(is_gold=False)
    counted = (
        Item.objects.order_by()
        .values("study_id", "character_id")
        .annotate(
            items=Count("pk", filter=not_gold),
            judgments=Coalesce(Sum("judgment_count", filter=not_gold), 0),
        )
    )
    CharacterProgress.objects.bulk_create(
        (
            CharacterProgress(
                study_id=row["study_id"],
                character_id=row["character_id"],
                items=row["items"],
                judgments=row["judgments"],
            )
            for row in counted
        ),
        batch_size=1000,
    )


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0015_items_updated_in_place'),
        ('dialogues', '0002_answer_author'),
    ]

    operations = [
        migrations.CreateModel(
            name='CharacterProgress',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('items', models.PositiveIntegerField(default=0)),
                ('judgments', models.PositiveIntegerField(default=0)),
                ('character', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='dialogues.character')),
                ('study', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='annotation.study')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('study', 'character'), name='one_progress_per_study_character')],
            },
        ),
        migrations.RunPython(count_from_items, migrations.RunPython.noop),
    ]
