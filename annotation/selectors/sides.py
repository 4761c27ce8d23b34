"""The sides of the pairs an annotator is shown: which answer goes left is
counterbalanced per annotator and study, by the history read here and a schedule
seeded with the site's secret (`pairing`)."""

import json
from dataclasses import dataclass, field

from django.utils.crypto import salted_hmac

from .. import sql
from ..models import Study


@dataclass
class SideHistory:
    """The sides of the pairs this annotator was shown in a study: per source, how many
    more times it was on their left than right; how many pairs they have been shown
    (their position in the side schedule); and which slot was on the left in their last
    two pairs, oldest first."""

    imbalance: dict[int, int] = field(default_factory=dict)
    shown: int = 0
    recent: list[int] = field(default_factory=list)

    def record(self, left_source: int, right_source: int, left_slot: int) -> None:
        self.imbalance[left_source] = self.imbalance.get(left_source, 0) + 1
        self.imbalance[right_source] = self.imbalance.get(right_source, 0) - 1
        self.shown += 1
        self.recent = [*self.recent[-1:], left_slot]


def side_history(user, study: Study) -> SideHistory:
    """Read in one written statement (see `annotation.sql`) whose size does not grow with
    the annotator's history: their pairs counted per (left, right) source, and the last
    two pairs' display orders."""
    # The annotator's pairs in the study are found once (a CTE read twice is computed
    # once), then counted and their last two taken. Each lease's study is looked up by
    # its item's key: joined to the items instead, PostgreSQL hashed every item of the
    # study (24,000 rows, about 3 ms a plan) to keep an annotator's few hundred leases.
    found = sql.rows(
        "WITH mine AS (SELECT a.left_source_id, a.right_source_id, a.served_at, a.id,"
        "  a.display_order FROM annotation_assignment a"
        "  WHERE a.annotator_id = %s AND a.left_source_id IS NOT NULL"
        "  AND (SELECT i.study_id FROM annotation_item i WHERE i.id = a.item_id) = %s)"
        " SELECT left_source_id, right_source_id, COUNT(*), NULL, NULL, NULL FROM mine"
        " GROUP BY left_source_id, right_source_id"
        " UNION ALL SELECT NULL, NULL, NULL, r.served_at, r.id, r.display_order FROM"
        " (SELECT served_at, id, display_order FROM mine ORDER BY served_at DESC, id DESC"
        "  LIMIT 2) r",
        [user.pk, study.pk],
    )
    history = SideHistory()
    recent = []
    for left, right, count, served_at, lease_id, display_order in found:
        if left is None:
            # As the database gives it (SQLite: its text, which sorts the same): only sorted.
            recent.append((served_at, lease_id, display_order))
            continue
        history.imbalance[left] = history.imbalance.get(left, 0) + count
        history.imbalance[right] = history.imbalance.get(right, 0) - count
        history.shown += count
    history.recent = [_json(order)[0] for *_when, order in sorted(recent)]
    return history


def _json(value):
    """A JSON column read by a written statement: text on both databases here."""
    return json.loads(value) if isinstance(value, str) else value


def side_schedule_seed(user, study: Study) -> str:
    # Keyed with the site's secret: an annotator who could compute their own schedule
    # could tell where the reference answer will be.
    return salted_hmac("annotation.sides", f"{study.pk}:{user.pk}", algorithm="sha256").hexdigest()
