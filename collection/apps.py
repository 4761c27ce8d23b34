from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CollectionConfig(AppConfig):
    name = "collection"
    verbose_name = _("Answer collection")

    def ready(self):
        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
