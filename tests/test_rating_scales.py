"""The rating scales are rendered once per process and reused (`rating_scales`): what the
annotator sees must still be the scales of this item, in their language, as staff last
worded them, with what they posted."""

import re

import pytest

from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import Metric
from annotation.templatetags import annotation_extras
from tests.factories import lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db


def scales_of(html: str) -> str:
    return re.search(r'<section class="scales">.*?</section>', html, re.S).group(0)


@pytest.fixture
def rendered(client, alice):
    """Alice's rating page, with the process's rendered scales forgotten first."""
    annotation_extras._rendered_scales.clear()
    client.force_login(alice)
    lease = lease_pair(alice)

    def page(token=None):
        return client.get(f"/annotate/{token or lease.token}/").content.decode()

    page.lease = lease
    return page


def test_every_scale_of_a_pair_is_on_the_page_and_reused_for_the_next_pair(client, alice, rendered):
    first = rendered()
    client.post(f"/annotate/{rendered.lease.token}/", complete_form())
    second_lease = lease_pair(alice)
    assert second_lease.item_id != rendered.lease.item_id
    second = rendered(second_lease.token)

    assert scales_of(first) == scales_of(second)
    for position in "ab":
        for slug in PAIR_METRIC_SLUGS:
            for value in "12345":
                assert f'name="{position}-{slug}" value="{value}"' in first
    assert " checked" not in scales_of(first)
    assert len(annotation_extras._rendered_scales) == 1


def test_an_edited_metric_shows_on_the_next_page(rendered):
    before = rendered()
    metric = Metric.objects.get(slug="fluency")
    metric.label_en = "Reads smoothly"
    metric.save()

    after = rendered()

    assert "Reads smoothly" not in before
    assert "<strong>Reads smoothly</strong>" in scales_of(after)


def test_each_language_gets_its_own_scales(client, rendered, settings):
    english = rendered()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = rendered()

    metric = Metric.objects.get(slug="fluency")
    assert f"<strong>{metric.label_en}</strong>" in scales_of(english)
    assert f"<strong>{metric.label_zh}</strong>" in scales_of(chinese)


def test_a_refused_submission_keeps_its_values_after_a_cached_page(client, rendered):
    rendered()  # the scales are now kept, with nothing checked
    form = {**complete_form(value="2"), "b-fluency": ""}

    response = client.post(
        f"/annotate/{rendered.lease.token}/", form, headers={"HX-Request": "true"}
    )

    assert response.status_code == 422
    scales = scales_of(response.content.decode())
    assert re.search(r'name="a-coherency" value="2" data-key="2" required checked', scales)
    assert not re.search(r'name="b-fluency" value="\d" data-key="\d" required checked', scales)
    assert len(annotation_extras._rendered_scales) == 1
