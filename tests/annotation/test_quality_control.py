"""Automatic flags, pausing and staff exclusions. Flags never change ratings."""

import pytest

from annotation import services
from annotation.models import (
    AnnotatorProfile,
    Assignment,
    FlagKind,
    ItemKind,
    Judgment,
    JudgmentDecision,
    QualityFlag,
    Rating,
    Study,
)
from annotation.models.work import describe_flag
from annotation.services.quality import gold_failures, is_straight_lined
from annotation.stats.annotators import agreement_deviations
from tests.builders import UserFactory, approved_annotator, lease_pair, make_study
from tests.helpers import submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def strict_study(demo_dataset):
    study = make_study()
    Study.objects.filter(pk=study.pk).update(min_seconds_per_item=10, gold_rate=0)
    return study


# Pure checks ---------------------------------------------------------------------------


def test_straight_lining_means_one_value_everywhere():
    assert is_straight_lined([4] * 18)
    assert not is_straight_lined([4] * 17 + [3])
    assert not is_straight_lined([4, 4])


def test_gold_failures_name_each_rating_outside_its_range():
    expectations = [(10, None, 1, 2), (None, 7, 4, 5)]
    rated = {(10, 7): 3, (10, 8): 2, (11, 7): 5, (11, 8): 1}

    failures = gold_failures(expectations, rated)

    assert {(f["answer"], f["metric"]) for f in failures} == {(10, 7)}
    assert gold_failures(expectations, {(10, 8): 1, (11, 7): 4}) == []


def test_agreement_deviation_is_the_distance_from_the_other_annotators_mean():
    # unit 1: x=1, y=5, z=5; unit 2: x=2, y=2; unit 3: x alone (not compared).
    x, y, z = 10, 20, 30
    result = agreement_deviations([1, 1, 1, 2, 2, 3], [x, y, z, x, y, x], [1, 5, 5, 2, 2, 3])

    assert result[x] == (pytest.approx((4 + 0) / 2), 2)
    assert result[y] == (pytest.approx((2 + 0) / 2), 2)
    assert result[z] == (pytest.approx(2.0), 1)


# Flags on submission -------------------------------------------------------------------


def test_a_fast_judgment_is_flagged_but_kept(strict_study, alice):
    lease = lease_pair(alice)

    judgment = submit(alice, lease)

    flag = judgment.flags.get()
    assert flag.kind == "too_fast"
    assert flag.figures == {"seconds": judgment.seconds_on_task, "minimum": 10}
    assert flag.figures["seconds"] < 10
    assert "below the study's minimum of 10 s" in flag.description
    assert Rating.objects.filter(judgment=judgment).count() == 18


def test_a_slow_enough_judgment_is_not_flagged(strict_study, alice):
    from datetime import timedelta

    lease = lease_pair(alice)
    Assignment.objects.filter(pk=lease.pk).update(served_at=lease.served_at - timedelta(seconds=30))

    judgment = submit(alice, lease)

    assert not judgment.flags.exists()


def test_straight_lining_is_flagged(strict_study, alice):
    Study.objects.update(min_seconds_per_item=0)
    lease = lease_pair(alice)

    judgment = submit(alice, lease, a_values=(3,), b_values=(3,))

    assert list(judgment.flags.values_list("kind", flat=True)) == ["straight_lining"]


def test_straight_lining_can_be_switched_off(strict_study, alice):
    Study.objects.update(min_seconds_per_item=0, flag_straight_lining=False)

    judgment = submit(alice, lease_pair(alice), a_values=(3,), b_values=(3,))

    assert not judgment.flags.exists()


def test_crossing_the_flag_threshold_pauses_the_annotator_for_review(strict_study, alice):
    Study.objects.update(pause_after_flags=2)

    submit(alice, lease_pair(alice))
    assert AnnotatorProfile.objects.get(user=alice).status == "approved"
    submit(alice, lease_pair(alice))

    profile = AnnotatorProfile.objects.get(user=alice)
    assert profile.status == "suspended" and profile.paused_reason == ""
    assert profile.automatic_pause == {"flags": 2, "study": strict_study.name}
    assert profile.pause_description == (
        f"paused automatically after 2 open quality flags in {strict_study.name}"
    )
    assert services.assignment_next(user=alice) is None
    assert Judgment.objects.filter(annotator=alice).count() == 2


def test_low_agreement_is_flagged_once(demo_dataset, luffy):
    study = make_study(overlap=3, rounds=(1,))
    Study.objects.update(
        min_seconds_per_item=0, low_agreement_min_units=10, low_agreement_threshold=2.5
    )
    agreeing = [approved_annotator(f"agree{i}@example.com", [luffy]) for i in range(2)]
    contrarian = approved_annotator("contrary@example.com", [luffy])
    for item in study.items.filter(character=luffy, kind=ItemKind.PAIR)[:4]:
        for annotator, values in (
            (agreeing[0], (4, 5)),
            (agreeing[1], (4, 5)),
            (contrarian, (1, 1)),
        ):
            lease = Assignment.objects.create(
                item=item,
                annotator=annotator,
                display_order=[0, 1],
                served_at=item.study.created_at,
                expires_at=item.study.created_at.replace(year=2100),
            )
            submit(annotator, lease, a_values=values, b_values=values[::-1])

    study.refresh_from_db()
    services.low_agreement_flags(study=study)
    services.low_agreement_flags(study=study)

    # The two who agree sit 1.75 from the others' mean (the contrarian pulls it), the
    # contrarian 3.5.
    flags = QualityFlag.objects.filter(kind="low_agreement")
    assert [f.annotator for f in flags] == [contrarian]
    assert flags[0].figures == {"distance": 3.5, "ratings": 4 * 18}
    assert flags[0].description == "mean distance 3.50 from the other annotators over 72 ratings"


# Exclusions ----------------------------------------------------------------------------


def test_staff_exclusion_is_recorded_with_who_and_why(strict_study, alice):
    judgment = submit(alice, lease_pair(alice))
    manager = UserFactory(email="manager@example.com", is_staff=True)

    services.judgment_exclude(
        judgment=judgment, decided_by=manager, reason="straight-lined the whole batch"
    )
    services.judgment_exclude(
        judgment=judgment, decided_by=manager, reason="on review, fine", excluded=False
    )

    judgment.refresh_from_db()
    assert not judgment.excluded
    decisions = list(JudgmentDecision.objects.filter(judgment=judgment))
    assert [(d.excluded, d.decided_by, d.reason) for d in decisions] == [
        (True, manager, "straight-lined the whole batch"),
        (False, manager, "on review, fine"),
    ]
    assert Rating.objects.filter(judgment=judgment).count() == 18


def test_an_exclusion_needs_a_reason(strict_study, alice):
    judgment = submit(alice, lease_pair(alice))

    with pytest.raises(services.AnnotationError):
        services.judgment_exclude(judgment=judgment, decided_by=None, reason="  ")

    judgment.refresh_from_db()
    assert not judgment.excluded and not JudgmentDecision.objects.exists()


def test_a_flags_figures_are_rounded_not_cut():
    # 4.96 s is "5.0 s", not "4.9 s", and a distance of 2.756 is "2.76", not "2.75".
    fast = describe_flag(FlagKind.TOO_FAST, {"seconds": 4.96, "minimum": 10})
    distant = describe_flag(FlagKind.LOW_AGREEMENT, {"distance": 2.756, "ratings": 72})

    assert fast == "5.0 s on the item, below the study's minimum of 10 s"
    assert distant == "mean distance 2.76 from the other annotators over 72 ratings"
