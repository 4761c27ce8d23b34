"""The staff study page names the human fans' source in the page's language, as the
results page does."""

import re

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("language", "name"), [("en", "Human fans"), ("zh-hans", "人类粉丝")])
def test_the_progress_by_source_names_the_fans_in_the_pages_language(
    client, manager, study, language, name
):
    client.force_login(manager)
    client.cookies["django_language"] = language

    html = client.get(f"/staff/studies/{study.slug}/").content.decode()

    heads = re.findall(r"<tr><th>([^<]+)</th>\s*<td>", html)
    assert name in heads
    assert language == "en" or "Human fans" not in heads
