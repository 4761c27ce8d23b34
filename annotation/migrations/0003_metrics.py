from django.db import migrations


def load_metrics(apps, schema_editor):
    from annotation.metric_definitions import metrics_ensure

    metrics_ensure(apps.get_model("annotation", "Metric"))


class Migration(migrations.Migration):
    dependencies = [("annotation", "0002_annotation_domain")]

    operations = [migrations.RunPython(load_metrics, migrations.RunPython.noop)]
