from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DialoguesConfig(AppConfig):
    name = "dialogues"
    verbose_name = _("Dialogues")
