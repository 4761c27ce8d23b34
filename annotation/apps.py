from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


def _ensure_metrics(sender, **kwargs):
    """The rating form is built from the Metric rows. They come with the migrations, and
    come back after anything that empties the tables (`manage.py flush`, test teardown)."""
    from .metric_definitions import metrics_ensure
    from .models import Metric

    metrics_ensure(Metric)


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Annotation")

    def ready(self):
        post_migrate.connect(_ensure_metrics, sender=self)
