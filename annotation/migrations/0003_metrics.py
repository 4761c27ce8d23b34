from django.db import migrations


def load_metrics(apps, schema_editor):
    from annotation.metric_definitions import METRICS

    Metric = apps.get_model("annotation", "Metric")
    for position, definition in enumerate(METRICS, start=1):
        fields = {k: v for k, v in definition.items() if k != "slug"}
        Metric.objects.update_or_create(
            slug=definition["slug"], defaults={**fields, "position": position}
        )


class Migration(migrations.Migration):
    dependencies = [("annotation", "0002_annotation_domain")]

    operations = [migrations.RunPython(load_metrics, migrations.RunPython.noop)]
