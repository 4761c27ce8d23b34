"""Pseudonyms that started like a spreadsheet formula (`-…`) get a new one, so that the
same pseudonym is spelled the same in every export format."""

from django.db import migrations, models

import annotation.models.common


def respell(apps, schema_editor):
    AnnotatorProfile = apps.get_model("annotation", "AnnotatorProfile")
    taken = set(AnnotatorProfile.objects.values_list("pseudonym", flat=True))
    starts = annotation.models.common.FORMULA_STARTS
    for profile in AnnotatorProfile.objects.filter(pseudonym__regex=r"^[-=+@\t\r]"):
        if not profile.pseudonym.startswith(starts):
            continue
        pseudonym = annotation.models.common.new_pseudonym()
        while pseudonym in taken:
            pseudonym = annotation.models.common.new_pseudonym()
        taken.add(pseudonym)
        profile.pseudonym = pseudonym
        profile.save(update_fields=["pseudonym"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0010_export_expiry")]

    operations = [
        migrations.AlterField(
            model_name="annotatorprofile",
            name="pseudonym",
            field=models.CharField(
                default=annotation.models.common.new_pseudonym, max_length=32, unique=True
            ),
        ),
        migrations.RunPython(respell, migrations.RunPython.noop),
    ]
