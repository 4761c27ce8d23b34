"""The look-ahead near the end of a character's work: how many judgments nobody could
give if this annotator took a candidate now."""

from collections import Counter

from .. import sql
from ..models import AssignmentState, ItemKind, Study
from ..pairing import (
    ItemGroup,
    Taker,
    items_one_annotator_can_take_per_scenario,
    slack,
    stranding_costs,
)
from .staffing import fixed, raters_and_capped

# Most annotators have seen none of a group's answers: they share this one empty set.
NOBODY_SEEN: frozenset[int] = frozenset()


def _per_scenario(study: Study) -> int:
    """How many items of one scenario one annotator may take (fixed once the study is
    made)."""
    return fixed(
        ("per scenario", study.pk, study.created_at),
        lambda: items_one_annotator_can_take_per_scenario(
            study.design, study.compared_sources.count() + 1
        ),
    )


class StrandingCosts(dict[int, int]):
    """Per candidate, the judgments its taking would strand; `lasting`: the candidates
    that strand nothing until `until` whatever is taken meanwhile (within SLACK_LASTING):
    their scenario keeps at least that much slack, or they have none (diversity sets)."""

    lasting: frozenset[int] = frozenset()


# A plan ordered by the look-ahead is kept for its minute (`services.worklists`) only
# where every scenario weighed keeps this much slack once the leases running out before
# the plan ends are counted open again: only as many skips, showings of its answers in
# diversity sets, caps reached or staff revocations in that one scenario within that
# minute could make its order strand a judgment. Elsewhere the plan serves one request:
# near the end, a stale order strands judgments even where each choice alone does not
# (it ranks items by how close to complete they were).
SLACK_LASTING = 5


def stranding_costs_of(
    user, study: Study, candidate_ids: list[int], now, until=None
) -> StrandingCosts:
    """Per candidate pair: how many of its scenario's open judgments nobody could give if
    this annotator took it now (`pairing.stranding_costs`). Where the scenario has slack
    (`groups_with_slack`, one statement) that is none, whichever is taken. Elsewhere the
    scenario's items, who else may rate them and what they have seen are read, in a
    handful of queries, and matched: this is where a wrong choice costs a judgment
    nobody can make up."""
    costs = StrandingCosts()
    if not candidate_ids:
        return costs
    group_of = {
        pk: (character_id, scenario_id)
        for pk, character_id, scenario_id in sql.rows(
            "SELECT id, character_id, scenario_id FROM annotation_item"
            f" WHERE id IN ({', '.join(['%s'] * len(candidate_ids))})"
            f" AND kind = {sql.literal(ItemKind.PAIR)}",
            candidate_ids,
        )
    }
    with_slack = groups_with_slack(user, study, set(group_of.values()), now, until)
    to_match = {pk: group for pk, group in group_of.items() if group not in with_slack}
    costs.update({pk: 0 for pk in candidate_ids if pk not in to_match})
    costs.lasting = frozenset(
        pk
        for pk in candidate_ids
        if pk not in group_of or with_slack.get(group_of[pk], -1) >= SLACK_LASTING
    )
    if to_match:
        costs.update(_matched_costs(user, study, to_match, now))
    return costs


def groups_with_slack(
    user, study: Study, groups: set[tuple[int, int]], now, until=None
) -> dict[tuple[int, int], int]:
    """The groups (character, scenario) where this annotator may take any pair without
    stranding a judgment, as `pairing.slack` counts it from two figures read in one
    statement: the group's open judgments (the overlap less judgments and live leases,
    per item), and the annotators who have been shown one of its answers (they may have
    no capacity left in it). Every other rater of the character, not at their cap, may
    take any of its items. Annotators shown an answer who no longer rate count against
    the slack too: the estimate errs towards the full matching.

    Per group, its slack at `until` (now when not given): the same count with the live
    leases that will have run out by then given back to the open judgments, as if nobody
    took an item meanwhile (taking one leaves the slack as it is)."""
    if not groups:
        return {}
    characters = {c for c, _s in groups}
    scenarios = {s for _c, s in groups}
    live = (
        "SELECT COUNT(*) FROM annotation_assignment a WHERE a.item_id = i.id"
        f" AND a.state = {sql.literal(AssignmentState.ACTIVE)} AND a.expires_at > %s"
    )
    counts = sql.rows(
        "WITH g AS (SELECT i.id, i.character_id, i.scenario_id,"
        f"  %s - i.judgment_count - ({live}) AS open, %s - i.judgment_count - ({live}) AS later"
        f" FROM annotation_item i WHERE {_IN_GROUPS.format(c=_marks(characters), s=_marks(scenarios))})"
        " SELECT g.character_id, g.scenario_id, SUM(CASE WHEN g.open > 0 THEN g.open ELSE 0 END),"
        "  SUM(CASE WHEN g.later > 0 THEN g.later ELSE 0 END),"
        "  (SELECT COUNT(DISTINCT x.annotator_id) FROM annotation_itemexposure e"
        "   JOIN annotation_answerexposure x ON x.answer_id = e.answer_id"
        "   WHERE x.study_id = %s AND x.annotator_id <> %s AND e.item_id IN"
        "   (SELECT h.id FROM g h WHERE h.character_id = g.character_id"
        "    AND h.scenario_id = g.scenario_id))"
        " FROM g GROUP BY g.character_id, g.scenario_id",
        [
            study.overlap,
            sql.db_moment(now),
            study.overlap,
            sql.db_moment(until or now),
            study.pk,
            False,
            *characters,
            *scenarios,
            study.pk,
            user.pk,
        ],
    )
    raters, capped = raters_and_capped(study, characters)
    my_id = user.pk
    free_raters = {
        c: sum(1 for a in people if a != my_id and a not in capped) for c, people in raters.items()
    }
    found = {}
    for character_id, scenario_id, open_now, open_later, shown in counts:
        free = free_raters.get(character_id, 0) - shown
        if (character_id, scenario_id) in groups and slack(open_now or 0, free) >= 0:
            found[(character_id, scenario_id)] = slack(open_later or 0, free)
    return found


# The pairs of some characters and scenarios: crossed, so rows of other groups are left
# out by the caller.
_IN_GROUPS = (
    f"i.study_id = %s AND i.kind = {sql.literal(ItemKind.PAIR)} AND i.is_gold = %s"
    " AND i.character_id IN ({c}) AND i.scenario_id IN ({s})"
)


def _marks(values) -> str:
    return ", ".join(["%s"] * len(values))


def _matched_costs(user, study: Study, group_of: dict[int, tuple[int, int]], now) -> dict[int, int]:
    """`stranding_costs_of` by the full matching, for candidates whose groups have no
    slack. The scenario's reads are written out (see `annotation.sql`): with a study
    staffed by exactly the annotators it needs, they run on every request. Rows are
    selected by their groups' characters and scenarios rather than by lists of item ids
    (hundreds, each prepared and sent); that crosses the characters with the scenarios,
    so rows of other groups are left out here."""
    candidate_ids = list(group_of)
    wanted_groups = set(group_of.values())
    characters = {c for c, _s in wanted_groups}
    scenarios = {s for _c, s in wanted_groups}
    in_groups = _IN_GROUPS.format(c=_marks(characters), s=_marks(scenarios))
    in_groups_params = [study.pk, False, *characters, *scenarios]
    exposures: dict[int, set[int]] = {}
    judged: dict[int, int] = {}
    items_of: dict[tuple[int, int], list[int]] = {}
    group_of_item: dict[int, tuple[int, int]] = {}
    for item_id, character_id, scenario_id, judgment_count, answer_id in sql.rows(
        "SELECT i.id, i.character_id, i.scenario_id, i.judgment_count, e.answer_id"
        " FROM annotation_item i JOIN annotation_itemexposure e ON e.item_id = i.id"
        f" WHERE {in_groups}",
        in_groups_params,
    ):
        group = (character_id, scenario_id)
        if group not in wanted_groups:
            continue
        if item_id not in exposures:
            exposures[item_id] = set()
            judged[item_id] = judgment_count
            group_of_item[item_id] = group
            items_of.setdefault(group, []).append(item_id)
        exposures[item_id].add(answer_id)
    # The live leases of these items; everyone who has had one of them, and everyone who
    # has seen their answers. Asked by the ids just read: asked by the groups again, the
    # database chose its plan before knowing how few rows that meant, and a plan made
    # while the tables were nearly empty scanned every exposure of the study for each
    # answer (20 ms and more a request, growing with the study).
    items, items_params = sql.any_of("a.item_id", sorted(group_of_item))
    leased: Counter[int] = Counter()
    taken: Counter[tuple[int, tuple[int, int]]] = Counter()
    for item_id, annotator_id, live in sql.rows(
        "SELECT a.item_id, a.annotator_id,"
        f" CASE WHEN a.state = {sql.literal(AssignmentState.ACTIVE)}"
        f" AND a.expires_at > %s THEN 1 ELSE 0 END FROM annotation_assignment a WHERE {items}",
        [sql.db_moment(now), *items_params],
    ):
        leased[item_id] += live
        taken[(annotator_id, group_of_item[item_id])] += 1
    group_answers = {a for answers in exposures.values() for a in answers}
    answers, answers_params = sql.any_of("x.answer_id", sorted(group_answers))
    seen: dict[int, set[int]] = {}
    for annotator_id, answer_id in sql.rows(
        "SELECT x.annotator_id, x.answer_id FROM annotation_answerexposure x"
        f" WHERE x.study_id = %s AND {answers}",
        [study.pk, *answers_params],
    ):
        seen.setdefault(annotator_id, set()).add(answer_id)
    raters, capped = raters_and_capped(study, characters)
    # Whoever has reached their cap takes nothing more.
    if capped:
        raters = {c: [a for a in people if a not in capped] for c, people in raters.items()}
    per_scenario = _per_scenario(study)

    # Built for every rater of every group weighed (thousands near the end of a large
    # study): most have had no item of the group and seen none of its answers, so they
    # share one Taker per capacity, and a missing count is read without Counter's
    # `__missing__`.
    unseen: dict[int, Taker] = {}

    def taker(annotator_id: int, group: tuple[int, int], answers: frozenset[int]) -> Taker:
        capacity = per_scenario - taken.get((annotator_id, group), 0)
        their_seen = seen.get(annotator_id)
        if their_seen and not their_seen.isdisjoint(answers):
            return Taker(capacity, frozenset(their_seen & answers))
        found = unseen.get(capacity)
        if found is None:
            found = unseen[capacity] = Taker(capacity, NOBODY_SEEN)
        return found

    # Read once: `user` is a lazy object whose every attribute costs a call.
    my_id = user.pk

    groups: dict[tuple[int, int], ItemGroup] = {}
    for group, item_ids in items_of.items():
        answers = frozenset(a for item in item_ids for a in exposures[item])
        groups[group] = ItemGroup(
            open_slots={item: study.overlap - judged[item] - leased[item] for item in item_ids},
            exposures={item: frozenset(exposures[item]) for item in item_ids},
            me=taker(my_id, group, answers),
            others=[
                taker(annotator_id, group, answers)
                for annotator_id in raters.get(group[0], [])
                if annotator_id != my_id
            ],
        )
    return stranding_costs(
        candidate_ids, {pk: groups[group] for pk, group in group_of.items() if group in groups}
    )
