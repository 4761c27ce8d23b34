"""The assignment policy against a real database: blinding across items, sides, caps,
fill order, gold items and the designs."""

from collections import Counter
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation import services
from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import (
    AnswerExposure,
    Assignment,
    GoldExpectation,
    Item,
    ItemExposure,
    ItemKind,
    Judgment,
    Study,
)
from annotation.pairing import scheduled_left_slot, side_slack
from annotation.selectors import sides as side_reads
from annotation.services import worklists
from dialogues.models import Answer, Character, Source
from tests.builders import approved_annotator, late_scenario, make_study
from tests.helpers import submit_item

pytestmark = pytest.mark.django_db


def work_through(user, limit=200):
    leases = []
    while len(leases) < limit and (assignment := services.assignment_next(user=user)) is not None:
        leases.append(assignment)
        submit_item(user, assignment)
    return leases


# Item generation -----------------------------------------------------------------------


def test_the_reference_design_makes_one_pair_per_source_character_scenario_and_round(demo_dataset):
    study = make_study()

    n_llm = Source.objects.filter(kind="llm").count()
    assert study.items.filter(kind=ItemKind.PAIR).count() == n_llm * 3 * 8 * 2
    reference = Source.objects.get(slug="human")
    for item in study.items.all()[:20]:
        assert item.slots.get(slot=0).answer.source == reference


def test_the_round_robin_design_pairs_every_two_sources(demo_dataset):
    study = services.study_create(
        name="RR",
        reference=Source.objects.get(slug="human"),
        compared=list(Source.objects.filter(kind="llm")),
        characters=list(Character.objects.all()),
        design="round-robin",
    )
    services.study_open(study=study)

    assert study.items.count() == 6 * 3 * 8 * 2  # 4 sources: 6 pairs per cell
    meetings = Counter(
        tuple(sorted(item.slots.values_list("answer__source__slug", flat=True)))
        for item in study.items.all()
    )
    assert len(meetings) == 6 and len(set(meetings.values())) == 1


def test_round_two_items_expose_both_round_one_answers_as_context(demo_dataset):
    study = make_study(rounds=(2,))
    item = study.items.first()

    exposed = set(ItemExposure.objects.filter(item=item).values_list("answer_id", flat=True))
    rated = set(item.slots.values_list("answer_id", flat=True))
    context = set(
        Answer.objects.filter(
            character=item.character,
            scenario=item.scenario,
            round=1,
            source__in=Source.objects.filter(answers__in=rated),
        ).values_list("pk", flat=True)
    )
    assert exposed == rated | context and len(exposed) == 4


def test_opening_twice_does_not_duplicate_items(demo_dataset):
    study = make_study()
    count = study.items.count()

    services.study_open(study=study)

    assert study.items.count() == count


# Blinding across items -----------------------------------------------------------------


def test_an_annotator_never_sees_the_same_answer_twice_in_a_study(demo_dataset, luffy):
    make_study(include_diversity=True)
    annotator = approved_annotator("careful@example.com", [luffy])

    leases = work_through(annotator)

    shown = [
        answer
        for lease in leases
        for answer in ItemExposure.objects.filter(item=lease.item).values_list(
            "answer_id", flat=True
        )
    ]
    assert len(shown) == len(set(shown))
    assert AnswerExposure.objects.filter(annotator=annotator).count() == len(shown)
    # The reference answer of a scenario recurs in all its pairs: one item per scenario.
    assert len(leases) <= 8 + 4


# Sides ---------------------------------------------------------------------------------


def test_each_source_is_shown_left_about_as_often_as_right(demo_dataset):
    characters = list(Character.objects.all())
    make_study(overlap=1, rounds=(1, 2))
    annotator = approved_annotator("sides@example.com", characters)

    leases = work_through(annotator)

    sides = Counter()
    for lease in leases:
        sides[lease.left_source_id] += 1
        sides[lease.right_source_id] -= 1
    assert len(leases) >= 20
    # Four sources: the side schedule may take a source log2(4) = 2 from even before the
    # lagging-source rule corrects it, which can add one. A bound of 2 forced the rule to
    # override the schedule on a third of the pairs and made the sides alternate.
    assert all(abs(v) <= 3 for v in sides.values()), sides


def test_sides_follow_the_annotators_schedule_and_repeat_after_an_override(demo_dataset):
    """Replaying each annotator's leases through the pure rule: wherever the schedule
    (given the sides of their last two pairs) kept every source within the slack, the
    lease put that slot on the left."""
    characters = list(Character.objects.all())
    study = make_study(overlap=3, rounds=(1, 2))
    followed = 0
    for n in range(3):
        annotator = approved_annotator(f"schedule{n}@example.com", characters)
        leases = [lease for lease in work_through(annotator) if lease.left_source_id]
        seed = side_reads.side_schedule_seed(annotator, study)
        imbalance, sides = {}, []
        for position, lease in enumerate(leases):
            scheduled = scheduled_left_slot(seed, position, sides[-2:])
            slot_sources = dict(lease.item.slots.values_list("slot", "answer__source_id"))
            pair = [slot_sources[0], slot_sources[1]]
            slack = side_slack(len({*pair, *imbalance}))
            left, right = pair[scheduled], pair[1 - scheduled]
            within = imbalance.get(left, 0) + 1 <= slack and imbalance.get(right, 0) - 1 >= -slack
            if within:
                assert lease.display_order[0] == scheduled, (annotator, position)
                followed += 1
            imbalance[lease.left_source_id] = imbalance.get(lease.left_source_id, 0) + 1
            imbalance[lease.right_source_id] = imbalance.get(lease.right_source_id, 0) - 1
            sides.append(lease.display_order[0])

    assert followed >= 40


def test_after_an_override_that_changed_the_side_the_next_pair_keeps_that_side(demo_dataset):
    characters = list(Character.objects.all())
    study = make_study(overlap=3, rounds=(1, 2))
    # An annotator whose schedule puts the same slot left at positions 1 and 2, so that
    # the repeat differs from what the schedule alone would say.
    for n in range(40):
        annotator = approved_annotator(f"override{n}@example.com", characters)
        seed = side_reads.side_schedule_seed(annotator, study)
        if scheduled_left_slot(seed, 1) == scheduled_left_slot(seed, 2):
            break
    overridden = 1 - scheduled_left_slot(seed, 1)
    history = work_through(annotator, limit=2)
    # Their first two pairs as the lagging-source rule would leave them after overriding
    # the schedule on the second one: the side changed against the schedule. Each
    # source stays within one of even, so the schedule is free to act on the third.
    for lease, side in zip(history, [1 - overridden, overridden], strict=True):
        slot_sources = dict(lease.item.slots.values_list("slot", "answer__source_id"))
        lease.display_order = [side, 1 - side]
        lease.left_source_id = slot_sources[side]
        lease.right_source_id = slot_sources[1 - side]
        lease.save(update_fields=["display_order", "left_source", "right_source"])
    # That history was written behind the service's back: the sides it keeps in the
    # annotator's worklist must be read again.
    worklists.plans_forget(annotator.pk)

    lease = services.assignment_next(user=annotator)

    assert lease.display_order[0] == overridden != scheduled_left_slot(seed, 2)


def test_the_recorded_sides_match_the_display_order(alice):
    lease = services.assignment_next(user=alice)
    while lease.item.kind != ItemKind.PAIR:
        services.assignment_skip(user=alice, token=lease.token, reason="pairs")
        lease = services.assignment_next(user=alice)

    slot_source = dict(lease.item.slots.values_list("slot", "answer__source_id"))
    assert lease.left_source_id == slot_source[lease.display_order[0]]
    assert lease.right_source_id == slot_source[lease.display_order[1]]


def test_the_side_history_is_the_sum_of_the_annotators_pairs_in_the_study(demo_dataset):
    """`side_history` counts in the database; replayed lease by lease here, in the order
    they were served (the last two sides included), it must come out the same, and a
    pair of another study must not count."""
    characters = list(Character.objects.all())
    study = make_study(overlap=3, rounds=(1, 2))
    annotator = approved_annotator("history@example.com", characters)
    leases = [lease for lease in work_through(annotator, limit=12) if lease.left_source_id]
    # Two leases served at the same moment, the last but one and the one before: the
    # later by id is the more recent, and only it is among the last two.
    Assignment.objects.filter(pk=leases[-2].pk).update(served_at=leases[-3].served_at)
    other = make_study()
    outside = services.assignment_next(user=annotator, study=other)
    assert outside is not None and outside.left_source_id is not None

    history = side_reads.side_history(annotator, study)

    imbalance: dict[int, int] = {}
    for lease in leases:
        imbalance[lease.left_source_id] = imbalance.get(lease.left_source_id, 0) + 1
        imbalance[lease.right_source_id] = imbalance.get(lease.right_source_id, 0) - 1
    assert history.imbalance == imbalance
    assert history.shown == len(leases) >= 5
    assert history.recent == [lease.display_order[0] for lease in leases[-2:]]


# Caps and order ------------------------------------------------------------------------


def test_the_per_study_cap_stops_the_work(demo_dataset, luffy):
    make_study()
    Study.objects.update(cap_per_annotator=3)
    annotator = approved_annotator("capped@example.com", [luffy])

    assert len(work_through(annotator)) == 3


def test_the_daily_cap_counts_only_today(demo_dataset, luffy):
    make_study()
    Study.objects.update(cap_per_annotator_per_day=2)
    annotator = approved_annotator("daily@example.com", [luffy])
    assert len(work_through(annotator)) == 2

    Judgment.objects.update(submitted_at=timezone.now() - timedelta(days=1))

    assert services.assignment_next(user=annotator) is not None


def test_caps_count_the_judgments_of_their_own_study_only(demo_dataset, luffy, natsume):
    first = make_study(characters=[luffy])
    second = make_study(characters=[natsume])
    Study.objects.update(cap_per_annotator=2, cap_per_annotator_per_day=3)
    annotator = approved_annotator("two-studies@example.com", [luffy, natsume])

    while (lease := services.assignment_next(user=annotator, study=first)) is not None:
        submit_item(annotator, lease)
    # A new plan, which reads what the annotator has done in each study.
    worklists.plans_forget(annotator.pk)
    leases = work_through(annotator)

    assert Judgment.objects.filter(annotator=annotator, item__study=first).count() == 2
    assert [lease.item.study_id for lease in leases] == [second.pk, second.pk]


def test_items_closest_to_complete_are_served_first(demo_dataset, luffy):
    study = make_study(overlap=3)
    Study.objects.update(balance_characters=False)
    almost = study.items.filter(character=luffy, kind=ItemKind.PAIR).order_by("pk")[5]
    Item.objects.filter(pk=almost.pk).update(judgment_count=2)
    annotator = approved_annotator("finisher@example.com", [luffy])

    assert services.assignment_next(user=annotator).item_id == almost.pk


def test_the_least_complete_character_is_served_first(demo_dataset, luffy, natsume):
    study = make_study(overlap=3)
    Item.objects.filter(study=study, character=luffy).update(judgment_count=1)
    services.character_progress_recount(study=study)
    annotator = approved_annotator("balanced@example.com", [luffy, natsume])

    assert services.assignment_next(user=annotator).item.character == natsume


def test_a_diversity_set_comes_first_and_only_one_per_character(demo_dataset, luffy):
    make_study(overlap=3, include_diversity=True, characters=[luffy])
    annotator = approved_annotator("sets@example.com", [luffy])

    kinds = [lease.item.kind for lease in work_through(annotator)]

    assert kinds[0] == ItemKind.DIVERSITY
    assert kinds.count(ItemKind.DIVERSITY) == 1 and len(kinds) > 1


def test_the_named_capacity_completes_every_diversity_set(demo_dataset, settings):
    """Rated after pairs, sets starved: whoever had seen one of their answers could no
    longer take them. The capacity counts what the sets cost."""
    from annotation.selectors import study_capacity
    from annotation.simulation import annotators_for, simulate_study

    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=3, include_diversity=True)
    # 18 for the pairs, 3 more for the scenarios the human set closes to its raters.
    assert {row.needed for row in study_capacity(study)} == {21}

    simulate_study(study=study, annotators=annotators_for(study), seed=1)

    sets = study.items.filter(kind=ItemKind.DIVERSITY)
    assert sets.count() == 12
    assert set(sets.values_list("judgment_count", flat=True)) == {3}


def test_near_the_end_an_annotator_leaves_others_the_only_item_they_can_take(demo_dataset, luffy):
    study, bob, only_for_bob, open_to_all = late_scenario(luffy)
    alice = approved_annotator("alice-late@example.com", [luffy])

    # Greedy order picks either pair at random; eight times in a row shows the choice.
    for _ in range(8):
        lease = services.assignment_next(user=alice, study=study)
        assert lease.item_id == open_to_all.pk
        Assignment.objects.filter(pk=lease.pk).delete()
        AnswerExposure.objects.filter(annotator=alice).delete()

    lease = services.assignment_next(user=alice, study=study)
    submit_item(alice, lease)
    assert services.assignment_next(user=bob, study=study).item_id == only_for_bob.pk


# Gold ----------------------------------------------------------------------------------


@pytest.fixture
def gold_study(demo_dataset, luffy):
    study = make_study(rounds=(1,))
    Study.objects.filter(pk=study.pk).update(gold_rate=0.25, min_seconds_per_item=0)
    gold = study.items.filter(character=luffy, kind=ItemKind.PAIR).order_by("pk")[:6]
    for item in gold:
        item.is_gold = True
        item.save()
        # A careful reader rates the compared answer's emotional value 1 or 2.
        GoldExpectation.objects.create(
            item=item, answer=item.slots.get(slot=1).answer, metric_id=None, minimum=1, maximum=2
        )
    # Marked here rather than in the admin, which recounts the character's progress.
    services.character_progress_recount(study=study)
    return study


def test_gold_items_are_mixed_in_at_the_study_rate(gold_study, luffy):
    annotator = approved_annotator("golden@example.com", [luffy])

    leases = work_through(annotator, limit=8)

    assert [lease.item.is_gold for lease in leases[:8]].count(True) == 2


def test_a_gold_item_rated_as_expected_passes(gold_study, luffy):
    annotator = approved_annotator("golden@example.com", [luffy])
    lease = services.assignment_next(user=annotator)
    while not lease.item.is_gold:
        submit_item(annotator, lease)
        lease = services.assignment_next(user=annotator)
    position_of_compared = "ab"[lease.display_order.index(1)]
    ratings = {(p, slug): 4 for p in "ab" for slug in PAIR_METRIC_SLUGS}
    ratings.update({(position_of_compared, slug): 1 for slug in PAIR_METRIC_SLUGS})

    judgment = services.judgment_submit(
        user=annotator,
        token=lease.token,
        submission=services.Submission(ratings=ratings, preference="tie"),
    )

    assert judgment.gold_check.passed
    assert not judgment.flags.exists()


def test_a_failed_gold_item_is_recorded_and_flagged(gold_study, luffy):
    annotator = approved_annotator("careless@example.com", [luffy])
    lease = services.assignment_next(user=annotator)
    while not lease.item.is_gold:
        submit_item(annotator, lease, value=3)
        lease = services.assignment_next(user=annotator)

    judgment = submit_item(annotator, lease, value=5)

    assert not judgment.gold_check.passed
    assert len(judgment.gold_check.failures) == len(PAIR_METRIC_SLUGS)
    assert "failed_check" in set(judgment.flags.values_list("kind", flat=True))


def test_gold_items_look_like_any_other_item(client, gold_study, luffy):
    annotator = approved_annotator("rater@example.com", [luffy])
    client.force_login(annotator)
    pages = []
    for _ in range(6):
        lease = services.assignment_next(user=annotator)
        pages.append((lease.item.is_gold, client.get(f"/annotate/{lease.token}/").content.decode()))
        submit_item(annotator, lease)

    assert {gold for gold, _ in pages} == {True, False}
    for _gold, html in pages:
        assert "gold" not in html.lower() and "attention" not in html.lower()


# The create_study command --------------------------------------------------------------


def test_create_study_prints_the_capacity_and_the_slug_last(demo_dataset):
    out = StringIO()

    call_command(
        "create_study", "--name", "Pilot 1", "--overlap", "2", "--rounds", "1", "--open", stdout=out
    )

    lines = out.getvalue().strip().splitlines()
    assert lines[-1] == "pilot-1"
    study = Study.objects.get(slug="pilot-1")
    assert study.status == "open" and study.rounds == [1] and study.overlap == 2
    assert study.items.count() == 3 * 3 * 8
    assert "《海贼王》的蒙奇·D·路飞: 6 / 0  short by 6" in out.getvalue()


def test_create_study_takes_sources_characters_and_design(demo_dataset):
    out = StringIO()

    call_command(
        "create_study",
        "--name",
        "Small",
        "--sources",
        "kumo-7b",
        "--characters",
        "蒙奇·D·路飞",
        "--design",
        "round-robin",
        "--diversity",
        stdout=out,
    )

    study = Study.objects.get(slug=out.getvalue().strip().splitlines()[-1])
    assert list(study.compared_sources.values_list("slug", flat=True)) == ["kumo-7b"]
    assert study.design == "round-robin" and study.include_diversity and study.status == "draft"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--reference", "nobody"], "no source 'nobody'"),
        (["--sources", "gpt-99"], "unknown source(s): gpt-99"),
        (["--characters", "孙悟空"], "unknown character(s): 孙悟空"),
        (["--rounds", "3"], "rounds must be 1, 2 or both"),
        (["--overlap", "0"], "overlap must be at least 1"),
        (["--sources", "human"], "cannot also be compared"),
    ],
)
def test_create_study_refuses_bad_arguments_and_creates_nothing(demo_dataset, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("create_study", "--name", "Bad", *args, stdout=StringIO())

    assert not Study.objects.filter(name="Bad").exists()


def test_no_lease_leaks_after_work(alice, bob):
    for annotator in (alice, bob):
        work_through(annotator)

    assert not Assignment.objects.filter(state="active").exists()


def test_an_annotator_staff_approve_rates_from_the_next_request_on(demo_dataset, luffy):
    from annotation.selectors import staffing

    study, bob, _only_for_bob, _open_to_all = late_scenario(luffy)
    assert bob.pk in staffing.raters_by_character(study, {luffy.pk})[luffy.pk]

    carol = approved_annotator("carol-late@example.com", [luffy])
    # Staffing is shared and read again after every staff change: no process keeps the
    # old copy (tests/annotation/test_staffing_shared.py runs two processes).
    assert carol.pk in staffing.raters_by_character(study, {luffy.pk})[luffy.pk]
