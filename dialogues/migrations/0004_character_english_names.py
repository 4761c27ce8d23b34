from django.db import migrations

from dialogues.character_names import ENGLISH_NAMES


def fill_english_names(apps, schema_editor):
    """Characters imported before the platform knew their English names get them; a name
    staff have given is kept."""
    Character = apps.get_model("dialogues", "Character")
    for character in Character.objects.filter(key__in=ENGLISH_NAMES):
        work_en, name_en = ENGLISH_NAMES[character.key]
        character.work_en = character.work_en or work_en
        character.name_en = character.name_en or name_en
        character.save(update_fields=["work_en", "name_en"])


class Migration(migrations.Migration):
    dependencies = [("dialogues", "0003_answer_author_label")]

    operations = [migrations.RunPython(fill_english_names, migrations.RunPython.noop)]
