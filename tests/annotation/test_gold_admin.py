"""Gold items in the Django admin: the expected ranges can only be set on the item's own
answers and on metrics of its kind. A range on another item's answer (the answer was a
bare id to type) or on the diversity scale of a pair matched no rating, so the check
passed every judgment and the gold item caught nobody."""

import re

import pytest
from django.utils.html import escape

from annotation.models import GoldExpectation, Item, ItemKind, Metric
from dialogues.models import Answer

pytestmark = pytest.mark.django_db


def choices(html, name):
    [select] = re.findall(rf'<select name="{name}".*?</select>', html, re.S)
    return set(re.findall(r'<option value="([^"]*)"', select))


def gold_pair(study):
    item = Item.objects.filter(study=study, kind=ItemKind.PAIR).first()
    Item.objects.filter(pk=item.pk).update(is_gold=True)
    return item


def post_range(admin_client, item, *, answer="", metric=""):
    return admin_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        {
            "is_gold": "on",
            "gold_expectations-INITIAL_FORMS": "0",
            "gold_expectations-TOTAL_FORMS": "1",
            "gold_expectations-0-answer": answer,
            "gold_expectations-0-metric": metric,
            "gold_expectations-0-minimum": "4",
            "gold_expectations-0-maximum": "5",
        },
    )


def test_the_item_page_shows_its_answers_and_offers_only_them(admin_client, study):
    item = gold_pair(study)
    own = [slot.answer for slot in item.slots.select_related("answer__source")]
    other = Answer.objects.exclude(pk__in=[a.pk for a in own]).first()

    html = admin_client.get(f"/admin/annotation/item/{item.pk}/change/").content.decode()

    answers = choices(html, "gold_expectations-0-answer")
    assert answers == {"", *(str(answer.pk) for answer in own)}
    assert str(other.pk) not in answers
    for answer in own:
        assert escape(answer.text) in html  # in full, beside its source
    assert "add_id_gold_expectations-0-answer" not in html  # no adding or editing answers
    metrics = choices(html, "gold_expectations-0-metric")
    assert metrics == {
        "",
        *(
            str(pk)
            for pk in Metric.objects.filter(for_diversity=False).values_list("pk", flat=True)
        ),
    }


def test_a_range_on_another_items_answer_is_refused(admin_client, study):
    item = gold_pair(study)
    own = set(item.slots.values_list("answer_id", flat=True))
    other = Answer.objects.exclude(pk__in=own).first()

    response = post_range(admin_client, item, answer=str(other.pk))

    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not GoldExpectation.objects.exists()


def test_a_range_on_the_diversity_scale_of_a_pair_is_refused(admin_client, study):
    item = gold_pair(study)
    diversity = Metric.objects.get(for_diversity=True)

    response = post_range(admin_client, item, metric=str(diversity.pk))

    assert response.status_code == 200
    assert not GoldExpectation.objects.exists()


def test_a_range_on_one_of_the_items_answers_is_kept(admin_client, study):
    item = gold_pair(study)
    answer = item.slots.first().answer
    fluency = Metric.objects.get(slug="fluency")

    response = post_range(admin_client, item, answer=str(answer.pk), metric=str(fluency.pk))

    assert response.status_code == 302
    assert GoldExpectation.objects.get().answer == answer


def test_a_diversity_set_takes_a_range_on_all_its_answers_only(admin_client, demo_dataset):
    from tests.builders import make_study

    study = make_study(include_diversity=True)
    item = Item.objects.filter(study=study, kind=ItemKind.DIVERSITY).first()
    Item.objects.filter(pk=item.pk).update(is_gold=True)
    one = item.slots.first().answer
    diversity = Metric.objects.get(for_diversity=True)

    html = admin_client.get(f"/admin/annotation/item/{item.pk}/change/").content.decode()
    refused = post_range(admin_client, item, answer=str(one.pk), metric=str(diversity.pk))
    kept = post_range(admin_client, item, metric=str(diversity.pk))

    # Its ratings name no answer, so a range on one of them would pass everyone.
    assert choices(html, "gold_expectations-0-answer") == {""}
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert kept.status_code == 302
    assert GoldExpectation.objects.get().answer is None
