"""The look-ahead near the end of a character's work: how many judgments nobody could
give if this annotator took a candidate now."""

from collections import Counter

from ..models import (
    AnswerExposure,
    Assignment,
    AssignmentState,
    Item,
    ItemExposure,
    ItemKind,
    Judgment,
    Study,
)
from ..pairing import (
    ItemGroup,
    Taker,
    items_one_annotator_can_take_per_scenario,
    stranding_costs,
)
from .studies import study_raters


def stranding_costs_of(user, study: Study, candidate_ids: list[int], now) -> dict[int, int]:
    """Per candidate pair: how many of its scenario's open judgments nobody could give if
    this annotator took it now (`pairing.stranding_costs`). The scenario's items, who
    else may rate them and what they have seen are read here, in a handful of queries:
    this runs only near the end of a character's work, where a wrong choice costs a
    judgment nobody can make up."""
    group_of = {
        pk: (character_id, scenario_id)
        for pk, character_id, scenario_id in Item.objects.filter(
            pk__in=candidate_ids, kind=ItemKind.PAIR
        ).values_list("pk", "character_id", "scenario_id")
    }
    if not group_of:
        return {}
    wanted_groups = set(group_of.values())
    characters = {c for c, _s in wanted_groups}
    group_items = Item.objects.filter(
        study=study,
        kind=ItemKind.PAIR,
        is_gold=False,
        character_id__in=characters,
        scenario_id__in={s for _c, s in wanted_groups},
    )
    exposures: dict[int, set[int]] = {}
    judged: dict[int, int] = {}
    items_of: dict[tuple[int, int], list[int]] = {}
    for (
        item_id,
        character_id,
        scenario_id,
        judgment_count,
        answer_id,
    ) in ItemExposure.objects.filter(item__in=group_items).values_list(
        "item_id", "item__character_id", "item__scenario_id", "item__judgment_count", "answer_id"
    ):
        group = (character_id, scenario_id)
        if group not in wanted_groups:
            continue
        if item_id not in exposures:
            exposures[item_id] = set()
            judged[item_id] = judgment_count
            items_of.setdefault(group, []).append(item_id)
        exposures[item_id].add(answer_id)
    leased = Counter(
        Assignment.objects.filter(
            item_id__in=list(exposures), state=AssignmentState.ACTIVE, expires_at__gt=now
        ).values_list("item_id", flat=True)
    )
    # Everyone who has had one of these items, and everyone who has seen their answers.
    taken = Counter(
        ((annotator_id, (character_id, scenario_id)))
        for annotator_id, character_id, scenario_id in Assignment.objects.filter(
            item_id__in=list(exposures)
        ).values_list("annotator_id", "item__character_id", "item__scenario_id")
    )
    seen: dict[int, set[int]] = {}
    for annotator_id, answer_id in AnswerExposure.objects.filter(
        study=study, answer_id__in={a for answers in exposures.values() for a in answers}
    ).values_list("annotator_id", "answer_id"):
        seen.setdefault(annotator_id, set()).add(answer_id)
    raters: dict[int, list[int]] = {}
    for annotator_id, character_id in study_raters(study, characters).values_list(
        "profile__user_id", "character_id"
    ):
        raters.setdefault(character_id, []).append(annotator_id)
    if study.cap_per_annotator:
        # Whoever has reached the study's cap takes nothing more.
        done = Counter(
            Judgment.objects.filter(item__study=study).values_list("annotator_id", flat=True)
        )
        raters = {
            c: [a for a in people if done[a] < study.cap_per_annotator]
            for c, people in raters.items()
        }
    per_scenario = items_one_annotator_can_take_per_scenario(
        study.design, study.compared_sources.count() + 1
    )

    def taker(annotator_id: int, group: tuple[int, int], answers: frozenset[int]) -> Taker:
        return Taker(
            capacity=per_scenario - taken[(annotator_id, group)],
            seen=frozenset(seen.get(annotator_id, set()) & answers),
        )

    groups: dict[tuple[int, int], ItemGroup] = {}
    for group, item_ids in items_of.items():
        answers = frozenset(a for item in item_ids for a in exposures[item])
        groups[group] = ItemGroup(
            open_slots={item: study.overlap - judged[item] - leased[item] for item in item_ids},
            exposures={item: frozenset(exposures[item]) for item in item_ids},
            me=taker(user.pk, group, answers),
            others=[
                taker(annotator_id, group, answers)
                for annotator_id in raters.get(group[0], [])
                if annotator_id != user.pk
            ],
        )
    return stranding_costs(
        candidate_ids, {pk: groups[group] for pk, group in group_of.items() if group in groups}
    )
