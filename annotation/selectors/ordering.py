"""In what order an annotator is offered the items they may take (`eligibility`): the
least complete character first (when the study balances characters), then diversity sets,
then items closest to completion, then at random; where a greedy choice could strand
judgments, a look-ahead (`lookahead`) puts the items whose taking would do so last."""

from typing import NamedTuple

from .. import sql
from ..models import ItemKind, Study
from .eligibility import Available, available_items
from .lookahead import stranding_costs_of
from .staffing import fixed, raters_by_character
from .studies import annotators_needed_by_character

CANDIDATES = 20
# The next item is chosen with a look-ahead over more candidates (`stranding_costs_of`)
# where a greedy choice can cost a judgment nobody can make up: near the end of a
# character's work (at most LOOKAHEAD_SHARE of its judgments left), and throughout for a
# character staffed with about the annotators it needs (at most LOOKAHEAD_STAFFING times
# as many), where every annotator must take an item in every scenario they still can.
# Elsewhere any choice leaves enough room, and the look-ahead's reads (up to eight queries)
# would only slow every request down.
LOOKAHEAD_SHARE = 0.25
LOOKAHEAD_STAFFING = 1.5
LOOKAHEAD_CANDIDATES = 100
# Weighed a few at a time, until a few that strand nothing are found (see `_weighed`).
LOOKAHEAD_CHUNK = 10
LOOKAHEAD_ALTERNATIVES = 3


class Candidates(NamedTuple):
    ids: list[int]
    # Ordered by the look-ahead where some scenario's slack does not last the plan out
    # (or the full matching weighed it): an order that goes stale as soon as someone
    # takes an item, good for one request.
    looked_ahead: bool


def candidate_items(
    user, study: Study, character_ids, now, *, gold: bool, until=None
) -> Candidates:
    """Up to CANDIDATES items to try, best first: the least complete character first (when
    the study balances characters), then diversity sets, then items closest to
    completion, then at random. Near the end of a character's work, items whose taking
    would leave others' work undoable go last (see `stranding_costs_of`). `until`: when
    a plan made of them would end."""
    if gold:
        return Candidates(
            _best(available_items(user, study, character_ids, now, gold=True), CANDIDATES), False
        )
    progress = {c: study.progress[c] for c in character_ids if c in study.progress}
    tight = tightly_staffed(study)
    if not study.balance_characters:
        items = available_items(user, study, character_ids, now)
        if not _look_ahead(progress, tight, character_ids):
            return Candidates(_best(items, CANDIDATES), False)
        ids = _best(items, LOOKAHEAD_CANDIDATES)
        free, unweighed, stranding, lasting = _weighed(user, study, ids, now, until)
        if lasting:
            return Candidates(free[:CANDIDATES], False)
        return Candidates(free + unweighed + stranding, True)
    # One character at a time: sorting one character's items is cheap, sorting a whole
    # study's (24,000 for the published data) on every request is not, and the first
    # character nearly always has enough.
    found: list[int] = []
    unweighed: list[int] = []
    stranding: list[int] = []
    looked_ahead, lasting = False, True
    for character_id in _characters_by_need(study, progress):
        # Asked of this character alone, so that the seen answers it excludes are its own.
        its_items = available_items(user, study, [character_id], now)
        if not _look_ahead(progress, tight, [character_id]):
            found += _best(its_items, CANDIDATES - len(found))
        else:
            looked_ahead = True
            ids = _best(its_items, LOOKAHEAD_CANDIDATES)
            free, not_weighed, costly, its_lasting = _weighed(user, study, ids, now, until)
            lasting = lasting and its_lasting
            found += free
            unweighed += not_weighed
            # Taken only if nothing else is left: the annotator still gives a judgment.
            stranding += costly
        if len(found) >= CANDIDATES or (looked_ahead and len(found) >= LOOKAHEAD_ALTERNATIVES):
            break
    if not looked_ahead or lasting:
        # Without the look-ahead, or where every scenario weighed has slack that lasts the
        # plan out: a plan of the candidates weighed free (and those of characters that
        # needed no look-ahead) keeps its order while it lasts.
        return Candidates(found[:CANDIDATES], False)
    return Candidates(found + unweighed + stranding, True)


def _best(items: Available, limit: int) -> list[int]:
    """The first `limit` of `items` in the policy's order: diversity sets first (a set is
    closed to anyone who has already seen one of its answers in a pair, so late in a
    study nobody could take it), then items closest to complete (so complete items
    appear early), then at random."""
    return [
        item_id
        for (item_id,) in sql.rows(
            f"SELECT i.id FROM annotation_item i WHERE {items.where}"
            f" ORDER BY CASE WHEN i.kind = {sql.literal(ItemKind.DIVERSITY)} THEN 0 ELSE 1 END,"
            f" i.judgment_count DESC, {sql.random_draw()} LIMIT %s",
            [*items.params, limit],
        )
    ]


def _characters_by_need(study: Study, progress: dict[int, tuple[int, int]]) -> list[int]:
    """The annotator's characters, the one with the smallest share of its judgments done
    first."""
    return sorted(progress, key=lambda c: (progress[c][0] / max(1, progress[c][1]), c))


def _look_ahead(progress: dict[int, tuple[int, int]], tight: frozenset[int], character_ids) -> bool:
    if tight.intersection(character_ids):
        return True
    done = sum(progress.get(c, (0, 0))[0] for c in character_ids)
    wanted = sum(progress.get(c, (0, 0))[1] for c in character_ids)
    return wanted > 0 and wanted - done <= LOOKAHEAD_SHARE * wanted


def tightly_staffed(study: Study) -> frozenset[int]:
    """The study's characters with at least the annotators they need but at most
    LOOKAHEAD_STAFFING times as many. With fewer the study cannot finish whatever the
    order (staff see it on the capacity page); with more there is slack until the end.
    From the study's shared staffing (`staffing`): a staff change counts on the next
    request of every process. What each character needs follows from the study's items,
    which never change once it is open (only open studies are planned): kept by each
    process, so that a crowd joining a study (every join a staff change) costs no
    reading of them."""
    needed = fixed(
        ("needed", study.pk, study.created_at), lambda: annotators_needed_by_character(study)
    )
    raters = raters_by_character(study, list(needed))
    return frozenset(
        c for c, n in needed.items() if n <= len(raters.get(c, ())) <= LOOKAHEAD_STAFFING * n
    )


def _weighed(
    user, study: Study, candidate_ids: list[int], now, until=None
) -> tuple[list[int], list[int], list[int], bool]:
    """The candidates, in their order, split by the look-ahead into (free, unweighed,
    stranding): those whose taking strands no judgment; those not weighed, because
    LOOKAHEAD_ALTERNATIVES free ones were found before them; and those that would strand
    some, fewest first; and whether every scenario weighed had slack lasting until
    `until` (`lookahead.SLACK_LASTING`), so that the order holds until then. Weighed LOOKAHEAD_CHUNK at a time: a candidate's cost depends on
    its own scenario only, so the first free candidate is the same as if all were weighed
    at once, and early in a study it is nearly always among the first few."""
    free: list[int] = []
    costly: dict[int, int] = {}
    lasting = True
    for start in range(0, len(candidate_ids), LOOKAHEAD_CHUNK):
        chunk = candidate_ids[start : start + LOOKAHEAD_CHUNK]
        costs = stranding_costs_of(user, study, chunk, now, until)
        lasting = lasting and set(chunk) <= costs.lasting
        for item in chunk:
            if costs.get(item):
                costly[item] = costs[item]
            else:
                free.append(item)
        if len(free) >= LOOKAHEAD_ALTERNATIVES:
            rest = candidate_ids[start + LOOKAHEAD_CHUNK :]
            return free, rest, sorted(costly, key=costly.get), lasting
    return free, [], sorted(costly, key=costly.get), lasting
