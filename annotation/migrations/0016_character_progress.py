"""Each study's judgments and items per character, kept by the submissions
(`CharacterProgress`), counted here for the studies made before."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, Sum


def count_from_items(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    CharacterProgress = apps.get_model("annotation", "CharacterProgress")
    counted = (
        Item.objects.filter(is_gold=False)
        .order_by()
        .values("study_id", "character_id")
        .annotate(items=Count("pk"), judgments=Sum("judgment_count"))
    )
    CharacterProgress.objects.bulk_create(
        (
            CharacterProgress(
                study_id=row["study_id"],
                character_id=row["character_id"],
                items=row["items"],
                judgments=row["judgments"] or 0,
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
