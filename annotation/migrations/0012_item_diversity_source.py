"""A diversity set names its source (`Item.diversity_source`); existing sets get the
source of their answers (all of one source; the first slot's, as the exports took it)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def fill(apps, schema_editor):
    Item = apps.get_model("annotation", "Item")
    ItemAnswer = apps.get_model("annotation", "ItemAnswer")
    first_slot = ItemAnswer.objects.filter(item_id=OuterRef("pk")).order_by("slot")
    Item.objects.filter(kind="diversity", diversity_source__isnull=True).update(
        diversity_source_id=Subquery(first_slot.values("answer__source_id")[:1])
    )


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0011_pseudonyms_never_start_like_a_formula"),
        ("dialogues", "0002_answer_author"),
    ]

    operations = [
        migrations.AddField(
            model_name="item",
            name="diversity_source",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="dialogues.source",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
