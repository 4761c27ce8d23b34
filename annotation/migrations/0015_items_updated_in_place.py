"""An item's (study, character) index no longer holds its judgment count, which every
judgment changes: PostgreSQL can then update the row in place instead of entering a new
version of it in each of the table's indexes; the study's own index, which this one
begins with, is gone."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0014_indexes_the_loop_never_reads'),
        ('dialogues', '0002_answer_author'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='item',
            name='annotation__study_i_fd12ca_idx',
        ),
        migrations.AlterField(
            model_name='item',
            name='study',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='items', to='annotation.study'),
        ),
        migrations.AddIndex(
            model_name='item',
            index=models.Index(fields=['study', 'character'], name='annotation__study_i_35dc01_idx'),
        ),
    ]
