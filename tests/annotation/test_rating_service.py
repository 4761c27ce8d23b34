"""Recording judgments: the rules that keep ratings complete, in range and unduplicated."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import Assignment, AssignmentState, Item, ItemKind, Judgment, Rating
from tests.builders import approved_annotator, lease_pair, make_study
from tests.helpers import full_ratings, pair_submission

pytestmark = pytest.mark.django_db


def test_a_complete_submission_records_one_judgment_with_every_rating(alice):
    assignment = lease_pair(alice)

    judgment = services.judgment_submit(
        user=alice, token=assignment.token, submission=pair_submission()
    )

    assert judgment.ratings.count() == 18
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED
    assert Item.objects.get(pk=assignment.item_id).judgment_count == 1
    assert judgment.seconds_on_task >= 0


def test_positions_are_mapped_back_to_the_answers_shown_there(alice):
    assignment = lease_pair(alice)
    slot_answer = dict(assignment.item.slots.values_list("slot", "answer_id"))
    shown_as_b = slot_answer[assignment.display_order[1]]
    ratings = full_ratings(value=2)
    ratings.update({("b", slug): 5 for slug in PAIR_METRIC_SLUGS})

    judgment = services.judgment_submit(
        user=alice,
        token=assignment.token,
        submission=pair_submission(ratings=ratings, preference="b"),
    )

    assert judgment.preferred_answer_id == shown_as_b
    assert set(
        Rating.objects.filter(judgment=judgment, answer_id=shown_as_b).values_list(
            "value", flat=True
        )
    ) == {5}


def test_time_on_task_is_measured_on_the_server_from_serving(alice):
    assignment = lease_pair(alice)
    Assignment.objects.filter(pk=assignment.pk).update(
        served_at=timezone.now() - timedelta(seconds=90)
    )

    judgment = services.judgment_submit(
        user=alice, token=assignment.token, submission=pair_submission()
    )

    assert 90 <= judgment.seconds_on_task < 100


def test_a_replayed_submission_makes_no_second_judgment(alice):
    assignment = lease_pair(alice)
    services.judgment_submit(user=alice, token=assignment.token, submission=pair_submission())

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(user=alice, token=assignment.token, submission=pair_submission())

    assert refusal.value.code == "already_submitted"
    assert Judgment.objects.count() == 1
    assert Rating.objects.count() == 18


@pytest.mark.parametrize(
    "ratings,code",
    [
        ({**full_ratings(), ("a", "fluency"): 6}, "out_of_range"),
        ({**full_ratings(), ("a", "fluency"): 0}, "out_of_range"),
        (
            {k: v for k, v in full_ratings().items() if k != ("b", "emotional_value")},
            "missing_rating",
        ),
        ({**full_ratings(), ("c", "fluency"): 3}, "unknown_rating"),
        ({**full_ratings(), ("a", "diversity"): 3}, "unknown_rating"),
    ],
    ids=["too high", "zero", "missing metric", "third answer", "diversity on a pair"],
)
def test_bad_ratings_are_refused_and_change_nothing(alice, ratings, code):
    assignment = lease_pair(alice)

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(
            user=alice, token=assignment.token, submission=pair_submission(ratings=ratings)
        )

    assert refusal.value.code == code
    assert Judgment.objects.count() == 0 and Rating.objects.count() == 0
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.ACTIVE


def test_a_missing_preference_is_refused(alice):
    assignment = lease_pair(alice)

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(
            user=alice, token=assignment.token, submission=pair_submission(preference="")
        )

    assert refusal.value.code == "preference"
    assert Judgment.objects.count() == 0


def test_an_item_leased_to_someone_else_is_refused(alice, bob):
    assignment = lease_pair(alice)

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(user=bob, token=assignment.token, submission=pair_submission())

    assert refusal.value.code == "not_yours"
    assert Judgment.objects.count() == 0


def test_a_stale_lease_is_refused(alice):
    assignment = lease_pair(alice)
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(user=alice, token=assignment.token, submission=pair_submission())

    assert refusal.value.code == "lease_expired"
    assert Judgment.objects.count() == 0


def test_the_human_guess_is_stored_as_the_answer_guessed(demo_dataset, luffy):
    make_study(ask_human_guess=True)
    dana = approved_annotator("dana@example.com", [luffy])
    assignment = lease_pair(dana)
    slot_answer = dict(assignment.item.slots.values_list("slot", "answer_id"))

    with pytest.raises(services.AnnotationError):
        services.judgment_submit(user=dana, token=assignment.token, submission=pair_submission())
    judgment = services.judgment_submit(
        user=dana, token=assignment.token, submission=pair_submission(human_guess="a")
    )

    assert judgment.human_guess_asked
    assert judgment.human_guess_id == slot_answer[assignment.display_order[0]]


def test_a_diversity_set_gets_one_set_rating(demo_dataset, luffy):
    study = make_study(include_diversity=True)
    study.items.filter(kind=ItemKind.PAIR).update(judgment_count=study.overlap)
    erin = approved_annotator("erin@example.com", [luffy])
    assignment = services.assignment_next(user=erin)
    assert assignment.item.kind == ItemKind.DIVERSITY

    judgment = services.judgment_submit(
        user=erin,
        token=assignment.token,
        submission=services.Submission(ratings={("set", "diversity"): 2}),
    )

    rating = judgment.ratings.get()
    assert rating.answer_id is None and rating.value == 2


def test_annotators_only_get_items_of_characters_they_are_approved_for(
    alice, carol, luffy, natsume
):
    for _ in range(5):
        assignment = services.assignment_next(user=alice)
        assert assignment.item.character == luffy
        services.assignment_skip(user=alice, token=assignment.token, reason="next")
    assert services.assignment_next(user=carol).item.character == natsume


def test_no_item_gets_more_leases_and_judgments_than_the_overlap(demo_dataset, luffy):
    make_study(overlap=2)
    annotators = [approved_annotator(f"a{i}@example.com", [luffy]) for i in range(5)]

    for annotator in annotators:
        for _ in range(10):
            assignment = services.assignment_next(user=annotator)
            if assignment is None:
                break
            if assignment.item.kind == ItemKind.PAIR:
                services.judgment_submit(
                    user=annotator, token=assignment.token, submission=pair_submission()
                )
            else:
                services.judgment_submit(
                    user=annotator,
                    token=assignment.token,
                    submission=services.Submission(ratings={("set", "diversity"): 3}),
                )

    per_item = Judgment.objects.values_list("item_id", flat=True)
    assert max(list(per_item).count(i) for i in set(per_item)) <= 2


def test_an_annotator_never_gets_an_item_twice(alice):
    seen = set()
    while (assignment := services.assignment_next(user=alice)) is not None:
        assert assignment.item_id not in seen
        seen.add(assignment.item_id)
        services.assignment_skip(user=alice, token=assignment.token, reason="next")
    assert len(seen) >= 8


def test_an_expired_lease_returns_the_item_to_the_pool(demo_dataset, luffy):
    study = make_study(overlap=1, rounds=(1,))
    first = approved_annotator("first@example.com", [luffy])
    second = approved_annotator("second@example.com", [luffy])
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(
            item=item,
            annotator=first,
            display_order=[0, 1],
            served_at=now,
            expires_at=now + timedelta(minutes=30),
        )
        for item in study.items.filter(character=luffy)
    )
    assert services.assignment_next(user=second) is None

    Assignment.objects.filter(annotator=first).update(expires_at=now - timedelta(seconds=1))

    assert services.assignment_next(user=second) is not None


def test_the_same_lease_is_served_again_until_submitted(alice):
    first = services.assignment_next(user=alice)
    again = services.assignment_next(user=alice)

    assert again.pk == first.pk and again.display_order == first.display_order


def test_without_metrics_nothing_can_be_submitted(alice):
    from annotation.models import Metric

    assignment = lease_pair(alice)
    Metric.objects.all().delete()

    with pytest.raises(services.AnnotationError) as refusal:
        services.judgment_submit(
            user=alice, token=assignment.token, submission=pair_submission(ratings={})
        )

    assert refusal.value.code == "no_metrics"
    assert Judgment.objects.count() == 0
