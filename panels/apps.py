from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PanelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "panels"
    verbose_name = _("Participant panels")

    def ready(self):
        from common.destinations import destination_add

        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
        from .destinations import work_done, work_stop
        from .return_views import leave_address

        # The rating page (annotation) ends a participant's batch on the panel's pages.
        destination_add("work-stop", work_stop)
        destination_add("work-done", work_done)
        # ... and shows a participant the way to leave the study.
        destination_add("work-leave", leave_address)
