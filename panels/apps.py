from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PanelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "panels"
    verbose_name = _("Participant panels")

    def ready(self):
        from common.destinations import destination_add
        from common.sections import section_add

        from . import tasks  # noqa: F401  (registered, so common.enqueue can send them by name)
        from .destinations import work_done, work_setup, work_stop
        from .return_views import leave_address
        from .selectors import panel_study_of_page

        # The rating page (annotation) ends a participant's batch on the panel's pages.
        destination_add("work-stop", work_stop)
        destination_add("work-done", work_done)
        destination_add("work-setup", work_setup)
        # ... and shows a participant the way to leave the study.
        destination_add("work-leave", leave_address)
        # A study's staff dashboard leads to its panel's dashboard, when it has a panel.
        section_add(
            "staff-study",
            template="panels/_staff_study_section.html",
            context=lambda request: {"panel": panel_study_of_page(request)},
        )
