from django.apps import AppConfig
from django.db.models.signals import post_delete, post_migrate, post_save
from django.utils.translation import gettext_lazy as _


def _ensure_metrics(sender, **kwargs):
    """The rating form is built from the Metric rows. They come with the migrations, and
    come back after anything that empties the tables (`manage.py flush`, test teardown)."""
    from .metric_definitions import metrics_ensure
    from .models import Metric
    from .selectors import metrics_cache_clear

    metrics_ensure(Metric)
    metrics_cache_clear()


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = _("Annotation")

    def ready(self):
        from . import tasks  # noqa: F401  (registered, so annotation.enqueue can send them by name)
        from .selectors import metrics_cache_clear

        post_migrate.connect(_ensure_metrics, sender=self)
        # A label edited in the admin shows at once in this process, within a minute in
        # the others (selectors.METRICS_CACHE_SECONDS).
        Metric = self.get_model("Metric")
        post_save.connect(metrics_cache_clear, sender=Metric)
        post_delete.connect(metrics_cache_clear, sender=Metric)
