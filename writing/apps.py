from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WritingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "writing"
    verbose_name = _("Fan writing")

    def ready(self):
        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
