"""The rating controls (scales, preference, fan guess, comment) are rendered once per
process and reused (`rating_controls`), and so is the fixed text of the skip form
(`per_language`): what the annotator sees must still be the controls of this item, in
their language, as staff last worded them, with what they posted."""

import re

import pytest

from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import Metric, Study
from annotation.templatetags import annotation_extras
from tests.builders import lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db


def scales_of(html: str) -> str:
    return re.search(r'<section class="scales">.*?</section>', html, re.S).group(0)


@pytest.fixture
def rendered(client, alice):
    """Alice's rating page, with the process's rendered controls forgotten first."""
    annotation_extras._rendered_controls.clear()
    annotation_extras._rendered_per_language.clear()
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
    assert len(annotation_extras._rendered_controls) == 1


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
    assert len(annotation_extras._rendered_controls) == 1


def choices_of(html: str) -> list[str]:
    return re.findall(r'<fieldset class="choice group".*?</fieldset>', html, re.S)


def test_the_fan_guess_shows_only_where_the_study_asks_for_it(rendered):
    without = rendered()
    Study.objects.update(ask_human_guess=True)
    with_guess = rendered()

    assert len(choices_of(without)) == 1
    assert 'name="guess"' not in without
    assert len(choices_of(with_guess)) == 2
    assert 'name="guess" value="unsure"' in with_guess
    assert len(annotation_extras._rendered_controls) == 2


def test_a_refused_submission_keeps_its_preference_and_comment(client, rendered):
    rendered()
    form = {**complete_form(preference="b"), "b-fluency": "", "comment": "A hard one"}

    response = client.post(
        f"/annotate/{rendered.lease.token}/", form, headers={"HX-Request": "true"}
    )

    assert response.status_code == 422
    html = response.content.decode()
    assert 'name="preference" value="b" data-key="2" checked' in html
    assert 'name="preference" value="a" data-key="1" checked' not in html
    assert ">A hard one</textarea>" in html
    # The next page shows the controls as kept: nothing checked, nothing written.
    again = rendered()
    assert " checked" not in "".join(choices_of(again))
    assert "></textarea>" in again


def test_the_skip_reasons_are_in_the_annotators_language(rendered, settings):
    english = rendered()
    settings.LANGUAGE_CODE = "zh-hans"
    chinese = rendered()

    assert '<option value="unfamiliar">I do not know this scene or character well enough' in english
    assert '<option value="unfamiliar">我对这个场景或角色不够了解' in chinese
    assert 'name="reason"' in chinese
    assert len(annotation_extras._rendered_per_language) == 2
