"""Where a participant goes back to the panel: the template's {code} and {pid} filled in,
escaped wherever they land in the URL."""

import pytest

from panels import services
from panels.models import PanelStudy, Participant


def participant(template: str, *, code="C1A2B3", pid="5f1e2d3c4b5a69788796a5b4") -> Participant:
    """Unsaved: the link is worked out from the two objects alone."""
    return Participant(panel_study=PanelStudy(completion_url_template=template), pid=pid, code=code)


def test_prolifics_link_carries_the_code_as_cc():
    link = services.completion_link(
        participant("https://app.prolific.com/submissions/complete?cc={code}")
    )

    assert link == "https://app.prolific.com/submissions/complete?cc=C1A2B3"


def test_a_generic_link_carries_code_and_pid_where_the_panel_wants_them():
    link = services.completion_link(
        participant("https://www.credamo.com/end/{pid}?code={code}", pid="u-42", code="OK_1")
    )

    assert link == "https://www.credamo.com/end/u-42?code=OK_1"


@pytest.mark.parametrize(
    ("code", "pid", "expected"),
    [
        ("A&B", "x", "https://p.example/back/x?c=A%26B"),
        ("a b", "x/y", "https://p.example/back/x%2Fy?c=a%20b"),
        ("#1", "?q=1", "https://p.example/back/%3Fq%3D1?c=%231"),
        ("完成", "é", "https://p.example/back/%C3%A9?c=%E5%AE%8C%E6%88%90"),
    ],
)
def test_characters_that_mean_something_in_a_url_are_escaped(code, pid, expected):
    link = services.completion_link(
        participant("https://p.example/back/{pid}?c={code}", code=code, pid=pid)
    )

    assert link == expected


def test_there_is_no_link_before_a_code_is_given():
    assert services.completion_link(participant("https://p.example/?c={code}", code="")) == ""
