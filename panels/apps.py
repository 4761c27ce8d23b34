from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PanelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "panels"
    verbose_name = _("Participant panels")
