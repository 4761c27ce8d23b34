from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = _("LLM judges")

    def ready(self):
        # The judge ratings' own file in a study's snapshot: `annotation` writes the
        # snapshot and knows nothing of judges.
        from common.snapshots import snapshot_file_add

        from .exports import JUDGE_RATINGS_FILE, judge_ratings_write

        snapshot_file_add(JUDGE_RATINGS_FILE, judge_ratings_write)
