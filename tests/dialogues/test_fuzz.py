"""Property-based fuzzing of the two ways data comes in: the import and the rating form.

Whatever arrives, the answer is a clear error or success: never an uncaught exception,
never a 5xx, never a partial write. Examples are derandomized and bounded, so that CI runs
the same cases every time in a few seconds each.
"""

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.metric_definitions import PAIR_METRIC_SLUGS
from annotation.models import Assignment, AssignmentState, ItemKind, Judgment, Rating
from dialogues.importer import Problem, read_source_file
from dialogues.models import Answer, Character, Scenario, Source
from tests.builders import approved_annotator, lease_pair
from tests.fixtures.data import SCENARIO_1, SCENARIO_2, small_source

User = get_user_model()

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

# Text that has broken importers and pages before: markup, NUL, lone surrogates (only
# expressible through JSON escapes), width variants, huge and blank strings.
NASTY_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "   ",
            "\x00",
            "a\x00b",
            "\ud800",
            "x\udfff",
            "<script>alert(1)</script>",
            "=HYPERLINK(1)",
            "～",
            "x" * 5000,
            SCENARIO_1,
            SCENARIO_2,
        ]
    ),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | NASTY_TEXT,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = ("dialog_id", "question_r1", "answer_r1", "question_r2", "answer_r2")


@st.composite
def dialogues(draw):
    dialogue = {
        "dialog_id": draw(st.one_of(st.integers(-1, 62), st.sampled_from([1, 2]), JSON_VALUES)),
        "question_r1": draw(st.one_of(st.sampled_from([SCENARIO_1, SCENARIO_2]), NASTY_TEXT)),
        "answer_r1": draw(NASTY_TEXT),
        "question_r2": draw(NASTY_TEXT),
        "answer_r2": draw(NASTY_TEXT),
    }
    for field in draw(st.sets(st.sampled_from(FIELDS), max_size=2)):
        del dialogue[field]
    if draw(st.booleans()):
        dialogue["extra"] = draw(JSON_VALUES)
    return dialogue


CHARACTER_KEYS = st.one_of(
    st.sampled_from(["《海贼王》的蒙奇·D·路飞", "《夏目友人帐》的夏目贵志", "《》的", "路飞"]),
    st.builds(lambda w, n: f"《{w}》的{n}", NASTY_TEXT, NASTY_TEXT),
    st.text(max_size=20),
)
CONTENT = st.one_of(
    st.just(small_source()),
    st.dictionaries(
        CHARACTER_KEYS, st.one_of(st.lists(dialogues(), max_size=4), JSON_VALUES), max_size=3
    ),
    JSON_VALUES,
)


def encoded(content, draw_ascii: bool) -> bytes:
    # ensure_ascii writes lone surrogates as \ud800 escapes, as a hostile file could.
    return json.dumps(content, ensure_ascii=True).encode() if draw_ascii else _utf8(content)


def _utf8(content) -> bytes:
    try:
        return json.dumps(content, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(content, ensure_ascii=True).encode()


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), st.builds(encoded, CONTENT, st.booleans())))
@example(raw=b"[" * 100_000)
@example(raw=b"\xff\xfe")
@example(raw='{"《a》的b": [{"dialog_id": 1, "question_r1": "\\u0000"}]}'.encode())
def test_reading_a_file_never_raises_and_explains_every_problem(raw):
    source, problems = read_source_file("fuzz.json", raw, max_length=4000)

    for problem in problems:
        assert isinstance(problem, Problem)
        assert str(problem).startswith("fuzz.json")
        assert problem.message
    if not problems:
        assert source.dialogues  # accepted means something to import


def table_state():
    return {
        "sources": sorted(Source.objects.values_list("slug", "kind")),
        "characters": sorted(Character.objects.values_list("key", "work_zh", "name_zh")),
        "scenarios": sorted(Scenario.objects.values_list("number", "question")),
        "answers": sorted(
            Answer.objects.values_list("character_id", "scenario_id", "source_id", "round", "text")
        ),
    }


@pytest.mark.django_db
@FUZZ
@given(
    files=st.lists(
        st.tuples(st.sampled_from(["human", "gpt-4.1", "model-x"]), CONTENT, st.booleans()),
        min_size=1,
        max_size=3,
        unique_by=lambda f: f[0],
    )
)
@example(files=[("human", small_source(), True), ("gpt-4.1", small_source(), False)])
@example(files=[("human", small_source(answer_r1="别担心\x00"), False)])
@example(files=[("human", small_source(answer_r2="\ud800"), True)])
@example(
    files=[
        ("human", {f"《{'长' * 150}》的路飞": [small_source()["《海贼王》的蒙奇·D·路飞"][0]]}, True)
    ]
)
def test_the_import_command_succeeds_or_explains_and_writes_nothing(files):
    before = table_state()
    with tempfile.TemporaryDirectory() as directory:
        for slug, content, ascii_only in files:
            Path(directory, f"{slug}.json").write_bytes(encoded(content, ascii_only))
        stdout, stderr = io.StringIO(), io.StringIO()
        try:
            call_command("import_chatanime", directory, stdout=stdout, stderr=stderr)
        except CommandError as error:
            assert "nothing was written" in str(error)
            assert stderr.getvalue().strip(), "the problems are listed"
            assert table_state() == before
        else:
            assert "Import complete" in stdout.getvalue() or "Nothing changed" in stdout.getvalue()


# The rating form -----------------------------------------------------------------------

FORM_NAMES = [f"{p}-{slug}" for p in "ab" for slug in PAIR_METRIC_SLUGS] + [
    "preference",
    "guess",
    "comment",
    "set-diversity",
    "c-fluency",
    "a-diversity",
    "csrfmiddlewaretoken",
]
FORM_VALUES = st.one_of(
    st.sampled_from(
        ["1", "2", "3", "4", "5", "0", "6", "-1", " 3", "3.0", "²", "٣", "a", "b", "tie", ""]
    ),
    st.sampled_from(["unsure", "99999999999999999999999", "\x00", "<script>"]),
    st.text(max_size=30),
)
COMPLETE = {**{f"{p}-{slug}": "4" for p in "ab" for slug in PAIR_METRIC_SLUGS}, "preference": "a"}


def active_pair_lease():
    """The live pair lease of the newest fuzzing annotator; accepted submissions use up an
    annotator's work, so a fresh annotator takes over when it runs out."""
    annotator = User.objects.filter(email__startswith="fuzz").order_by("-pk").first()
    if annotator is not None:
        lease = Assignment.objects.filter(
            annotator=annotator, state=AssignmentState.ACTIVE, item__kind=ItemKind.PAIR
        ).first()
        if lease is not None:
            return lease
        with contextlib.suppress(AttributeError):  # nothing left to lease
            return lease_pair(annotator)
    count = User.objects.filter(email__startswith="fuzz").count()
    annotator = approved_annotator(f"fuzz{count}@example.com", Character.objects.all())
    return lease_pair(annotator)


@pytest.mark.django_db
@FUZZ
@given(
    form=st.dictionaries(
        st.one_of(st.sampled_from(FORM_NAMES), st.text(max_size=12)), FORM_VALUES, max_size=24
    ),
    fill=st.booleans(),
    htmx=st.booleans(),
)
@example(form=COMPLETE, fill=False, htmx=True)
@example(form={**COMPLETE, "a-fluency": "²"}, fill=False, htmx=False)
@example(form={**COMPLETE, "comment": "a\x00b"}, fill=False, htmx=True)
def test_any_posted_form_gets_an_answer_and_never_a_partial_judgment(
    client, study, form, fill, htmx
):
    lease = active_pair_lease()
    client.force_login(lease.annotator)
    # Half the time the fuzzed fields are laid over a complete form, so that submissions
    # also get close to being accepted.
    data = {**COMPLETE, **form} if fill else form
    judgments_before = Judgment.objects.count()

    response = client.post(
        f"/annotate/{lease.token}/", data, headers={"HX-Request": "true"} if htmx else {}
    )

    assert response.status_code in (200, 302, 409, 422), response.status_code
    lease.refresh_from_db()
    made = Judgment.objects.count() - judgments_before
    if response.status_code == 422:
        assert made == 0 and lease.state == AssignmentState.ACTIVE
        assert 'role="alert"' in response.content.decode()
    else:
        assert made == (1 if lease.state == AssignmentState.SUBMITTED else 0)
    # At most one judgment per assignment, and each one complete.
    assert Judgment.objects.filter(assignment=lease).count() <= 1
    for judgment in Judgment.objects.filter(annotator=lease.annotator):
        assert judgment.ratings.count() == 2 * len(PAIR_METRIC_SLUGS)
        assert "\x00" not in judgment.comment
    assert not Rating.objects.filter(judgment__isnull=True).exists()
