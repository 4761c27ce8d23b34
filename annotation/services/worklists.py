"""An annotator's worklist: what the assignment policy would offer them next, planned once
and then taken from over several requests.

Planning is the costly half of serving an item: the studies with room for this annotator
(one query over their memberships, qualifications, caps and progress) and, in each, the
items they may take, best first (a query over a study's items). Neither changes much from
one item to the next, so a plan is kept in the cache and each next-item request only
tries its candidates in order. Everything a lease must never get wrong is still decided
when the lease is taken, under the item's lock and the database's unique constraints
(`leases._lease`): overlap, an item never twice, an answer never twice, the study open.
What a kept plan can get slightly wrong is only what the policy prefers (which character
and which items first) for at most PLAN_SECONDS, and, when two tabs of one annotator ask
at the same moment, the count and sides of one of those leases (the plan is read and
written back whole; the last write wins).

A plan is made afresh:
- when it is older than PLAN_SECONDS, or was made on another day (daily caps);
- when staff change who may rate what: a study opened or closed, its caps or characters,
  memberships (`plans_forget_all`), or one annotator's qualifications or status
  (`plans_forget`); connected to those models' saves and deletes in `annotation.apps`;
- when the annotator skips an item (their counts no longer follow from the plan);
- when it runs dry, or the look-ahead chose its order where some scenario's slack does
  not last the plan out: near the end of a character's work a stale order could strand
  judgments, so such a plan serves one request only (`lookahead.SLACK_LASTING`).

Caps stay exact: a plan counts the leases taken from it, and a study whose judgments plus
leases since the plan reach a cap has no room. Without the cache (Redis away) every
request plans afresh, as correct as before and only slower. (A staff change made while
Redis is away cannot mark the plans stale; they are then trusted for up to PLAN_SECONDS
after it returns.)
"""

import time
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction

from ..models import ItemKind, Study
from ..selectors.annotating import item_blocks
from ..selectors.eligibility import gold_due, studies_with_room
from ..selectors.ordering import candidate_items
from ..selectors.sides import SideHistory, side_history

# How long a plan is trusted. Long enough that most items come from a kept plan (an
# annotator rates one every 30-90 s; a crowd of them shares the server), short enough
# that the least complete character and the items closest to completion stay current.
PLAN_SECONDS = 60
GENERATION_KEY = "worklist:generation"
# Part of a kept plan's key: a plan kept by an older release of the site, with other
# fields, is never read by this one.
PLAN_LAYOUT = 2


@dataclass
class PlannedStudy:
    """One study with room for the annotator, as planned: the study row carries the
    annotator's figures (`done`, `done_today`, `cap`, `character_ids`, `progress`; see
    `studies_with_room`), `taken` counts the leases given from this plan since."""

    study: Study
    items: list[int]
    gold: list[int] | None = None  # gold candidates, planned when gold is first due
    taken: int = 0
    # The sides of the pairs shown so far, read once per plan and kept up to date by each
    # lease from it (`leases._lease`).
    sides: SideHistory | None = None

    @property
    def done(self) -> int:
        # A lease from this plan is a judgment unless it is skipped, which forgets the
        # plan, or runs out, which a new plan corrects.
        return self.study.done + self.taken

    def has_room(self) -> bool:
        study = self.study
        if study.cap and self.done >= study.cap:
            return False
        daily = study.cap_per_annotator_per_day
        return not (daily and study.done_today + self.taken >= daily)

    def gold_due(self) -> bool:
        return gold_due(self.study, done=self.done)


@dataclass
class Worklist:
    studies: list[PlannedStudy]
    answers: dict[int, frozenset[int]]  # item -> the answers it shows
    diversity_sets: dict[int, int]  # diversity set item -> its character
    generation: tuple[int, int]  # (everyone's, this annotator's) when planned
    day: str
    planned_at: float  # time.time(): plans are shared by every web process
    keep: bool  # False: planned with the look-ahead, good for this request only
    from_cache: bool = False

    def taken(self, planned: PlannedStudy, item_id: int) -> None:
        """A lease on `item_id` was given in `planned`'s study: count it, and drop the
        study's candidates that show one of its answers (nobody sees an answer twice in a
        study) and, for a diversity set, the character's other sets (one per character)."""
        planned.taken += 1
        shown = self.answers.get(item_id, frozenset())
        set_of = self.diversity_sets.get(item_id)

        def still_open(other: int) -> bool:
            return (
                other != item_id
                and not shown & self.answers.get(other, frozenset())
                and (set_of is None or self.diversity_sets.get(other) != set_of)
            )

        planned.items = [i for i in planned.items if still_open(i)]
        if planned.gold is not None:
            planned.gold = [i for i in planned.gold if still_open(i)]

    def refused(self, item_id: int) -> None:
        """No lease on `item_id` now (full, being leased, an answer already seen)."""
        for other in self.studies:
            other.items = [i for i in other.items if i != item_id]
            if other.gold is not None:
                other.gold = [i for i in other.gold if i != item_id]

    def sides(self, planned: PlannedStudy, user) -> SideHistory:
        if planned.sides is None:
            planned.sides = side_history(user, planned.study)
        return planned.sides

    def gold_candidates(self, planned: PlannedStudy, user, now) -> list[int]:
        """The study's gold candidates, planned the first time gold is due."""
        if planned.gold is None:
            study = planned.study
            planned.gold = candidate_items(user, study, study.character_ids, now, gold=True).ids
            self._learn(planned.gold)
        return planned.gold

    def _learn(self, item_ids: list[int]) -> None:
        """Read what these candidates show, and which are diversity sets (of which
        character), for `taken`: from the process's copies where it has them (most
        candidates were someone else's candidates a moment ago), the rest read and then kept
        for the leases that follow. Only for a plan that is kept: one made for a single
        request (the look-ahead's) gives one lease and is gone, and reading its hundred
        candidates would cost more than the rest of the request."""
        if not self.keep:
            return
        for item_id, (block, item) in item_blocks(item_ids).items():
            self.answers[item_id] = frozenset(block.exposed_answer_ids)
            if item.kind == ItemKind.DIVERSITY:
                self.diversity_sets[item_id] = item.character_id


def _key(user, only_study: Study | None) -> str:
    return f"worklist:{PLAN_LAYOUT}:{user.pk}:{only_study.pk if only_study is not None else '*'}"


def _annotator_generation_key(user_id: int) -> str:
    return f"{GENERATION_KEY}:{user_id}"


def _generation(user, found: dict | None = None) -> tuple[int, int]:
    """The counters that staff changes move on (everyone's, this annotator's), from
    `found` when the caller already read them (`worklist_of`)."""
    if found is None:
        found = cache.get_many(_generation_keys(user))
    return found.get(GENERATION_KEY, 0), found.get(_annotator_generation_key(user.pk), 0)


def _generation_keys(user) -> list[str]:
    return [GENERATION_KEY, _annotator_generation_key(user.pk)]


def _day(now) -> str:
    return now.date().isoformat()


def worklist_of(user, now, only_study: Study | None = None) -> Worklist:
    """The annotator's kept plan if it is still good, else a new one. The plan and the
    counters it must match are read in one round trip to the cache."""
    key = _key(user, only_study)
    found = cache.get_many([key, *_generation_keys(user)])
    kept, generation = found.get(key), _generation(user, found)
    if (
        isinstance(kept, Worklist)
        and kept.generation == generation
        and kept.day == _day(now)
        and time.time() - kept.planned_at < PLAN_SECONDS
    ):
        kept.from_cache = True
        return kept
    return worklist_plan(user, now, only_study, generation=generation)


def worklist_plan(
    user, now, only_study: Study | None = None, *, generation: tuple[int, int] | None = None
) -> Worklist:
    """Plan afresh: the studies with room, and in each the candidates the policy ranks
    first (gold ones are planned when first due, `Worklist.gold_candidates`).
    `generation`: the counters as the caller read them just before, or None to read
    them; read before anything the plan reads, so a change made meanwhile makes it stale."""
    if generation is None:
        generation = _generation(user)
    studies, keep = [], True
    plan_ends = now + timedelta(seconds=PLAN_SECONDS)
    for study in studies_with_room(user, now, only_study):
        regular = candidate_items(
            user, study, study.character_ids, now, gold=False, until=plan_ends
        )
        keep = keep and not regular.looked_ahead
        studies.append(PlannedStudy(study=study, items=regular.ids))
    worklist = Worklist(
        studies=studies,
        answers={},
        diversity_sets={},
        generation=generation,
        day=_day(now),
        planned_at=time.time(),
        keep=keep,
    )
    worklist._learn([item for planned in studies for item in planned.items])
    return worklist


def worklist_keep(user, only_study: Study | None, worklist: Worklist) -> None:
    """Keep the plan for the annotator's next request, unless it must not be reused."""
    key = _key(user, only_study)
    if not worklist.keep or not any(p.items or p.gold for p in worklist.studies):
        cache.delete(key)
        return
    worklist.from_cache = False
    cache.set(key, worklist, PLAN_SECONDS)


def plans_forget(user_id: int) -> None:
    """This annotator's plans are stale: their qualifications or status changed, or they
    skipped an item."""
    _bump(_annotator_generation_key(user_id))


def plans_forget_all(**_signal_arguments) -> None:
    """Every kept plan is stale: staff changed who may rate what in a study."""
    _bump(GENERATION_KEY)


def _bump(key: str) -> None:
    # Now, for the plans made before the change, and again once it is committed, for a
    # plan made meanwhile from what the database showed before the commit.
    _bump_now(key)
    transaction.on_commit(lambda: _bump_now(key))


def _bump_now(key: str) -> None:
    try:
        cache.incr(key)
    except ValueError:
        # Not there yet, or evicted: start from the clock rather than 1, so that no plan
        # made before an eviction can match the new value.
        cache.set(key, time.time_ns(), None)
