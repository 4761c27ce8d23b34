from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = _("LLM judges")

    def ready(self):
        from common.recomputes import study_part_add
        from common.sections import section_add
        from common.snapshots import snapshot_check_add, snapshot_file_add

        from . import tasks  # noqa: F401  (registered, so the beat can send them by name)
        from .exports import (
            JUDGE_FIGURES_FILE,
            JUDGE_RATINGS_FILE,
            judge_figures_write,
            judge_ratings_write,
        )
        from .reproduce import judges_reproduce
        from .selectors import judge_progress_of_page, judge_runs_of_page
        from .services import study_judges_refresh

        # `annotation` writes the snapshot, the pages and `aggregate` and knows nothing of
        # judges: the judges' files, sections and figures are added where it asks for them.
        snapshot_file_add(JUDGE_RATINGS_FILE, judge_ratings_write)
        snapshot_file_add(JUDGE_FIGURES_FILE, judge_figures_write)
        # `reproduce` rebuilds the judges' figures from those two files and ratings.jsonl.
        snapshot_check_add(JUDGE_FIGURES_FILE, judges_reproduce)
        # `aggregate` recomputes the judges' figures with the study's and prints them.
        study_part_add("judges", study_judges_refresh)
        # The study's results page shows each judge beside the humans; its staff page how
        # far each judge run has got.
        section_add(
            "results-study",
            template="judges/_results_section.html",
            context=lambda request: {"judge_runs": judge_runs_of_page(request)},
        )
        section_add(
            "staff-study",
            template="judges/_staff_study_section.html",
            context=lambda request: {"judge_runs": judge_progress_of_page(request)},
        )
