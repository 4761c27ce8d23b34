from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WritingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "writing"
    verbose_name = _("Fan writing")

    def ready(self):
        from common.sections import section_add

        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
        from .selectors import pending_applications

        # Writers apply like annotators: study managers decide on both on one page.
        section_add(
            "staff-screening",
            template="writing/_applications.html",
            context=lambda request: {"applications": pending_applications()},
        )
