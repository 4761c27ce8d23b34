"""A judgment names its item's study (`Judgment.study`); existing judgments get theirs
from their items."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    Judgment = apps.get_model("annotation", "Judgment")
    Judgment.objects.filter(study__isnull=True).update(
        study_id=Subquery(Item.objects.filter(pk=OuterRef("item_id")).values("study_id"))
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_item_diversity_source"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgment",
            name="study",
            field=models.ForeignKey(
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judgments",
                to="annotation.study",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="judgment",
            name="study",
            field=models.ForeignKey(
                editable=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judgments",
                to="annotation.study",
            ),
        ),
    ]
