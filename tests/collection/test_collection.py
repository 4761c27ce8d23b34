"""Collecting a model's answers through an OpenAI-compatible API, against a real HTTP
server in the test process and the real `openai` client."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from collection import guards, services
from collection.models import (
    AnswerEdit,
    ApiCall,
    CallOutcome,
    CharacterPrompt,
    CollectionRun,
    GeneratedAnswer,
    ModelEndpoint,
    ReviewStatus,
    RunStatus,
    SimulatedFollowup,
)
from dialogues.importer import import_chatanime
from dialogues.models import Answer, Source, SourceKind
from tests.fixtures.data import SCENARIO_1, small_source, write_source

pytestmark = pytest.mark.django_db(transaction=True)

LUFFY = "《海贼王》的蒙奇·D·路飞"


@pytest.fixture
def scenarios(tmp_path):
    """Two characters and scenarios 1 and 2, imported from a human source."""
    directory = tmp_path / "import"
    directory.mkdir()
    write_source(directory, "human", small_source())
    import_chatanime(directory)


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-responder-secret")
    monkeypatch.setenv("TEST_SIMULATOR_KEY", "sk-simulator-secret")


@pytest.fixture(autouse=True)
def _quick_retries(settings):
    settings.COLLECTION_RETRY_BASE_SECONDS = 0.01
    settings.COLLECTION_RETRY_MAX_SECONDS = 0.05
    settings.COLLECTION_RETRY_ATTEMPTS = 4


def collect(
    server, *extra, source="my-model", model="my-model-7b", simulator_url=None, scenarios="1-2"
):
    out = io.StringIO()
    call_command(
        "collect_answers",
        "--source", source,
        "--base-url", server.url,
        "--model", model,
        "--api-key-env", "TEST_MODEL_KEY",
        "--simulator-base-url", simulator_url or server.url,
        "--simulator-model", "simulator-model",
        "--simulator-api-key-env", "TEST_SIMULATOR_KEY",
        *(["--scenarios", scenarios] if scenarios else []),
        *extra,
        stdout=out,
    )  # fmt: skip
    return out.getvalue()


def test_it_collects_round_1_then_a_simulated_followup_then_round_2(scenarios, keys, chat_server):
    output = collect(chat_server, "--concurrency", "2")

    assert "Every requested answer exists: 8 accepted, 0 flagged" in output
    source = Source.objects.get(slug="my-model")
    assert source.kind == SourceKind.LLM
    assert Answer.objects.filter(source=source).count() == 8
    assert CollectionRun.objects.get().status == RunStatus.FINISHED

    second = GeneratedAnswer.objects.get(character__key=LUFFY, scenario__number=1, round=2)
    followup = SimulatedFollowup.objects.get(character__key=LUFFY, scenario__number=1)
    first = GeneratedAnswer.objects.get(character__key=LUFFY, scenario__number=1, round=1)
    assert second.question == followup.text
    assert first.question == SCENARIO_1
    # Round 2 is asked with the whole conversation, the simulator sees round 1's answer.
    round_2_request = next(
        r
        for r in chat_server.requests
        if r["model"] == "my-model-7b"
        and len(r["messages"]) == 4
        and r["messages"][1]["content"] == SCENARIO_1
        and "路飞" in r["messages"][0]["content"]
    )
    assert [m["role"] for m in round_2_request["messages"]] == [
        "system",
        "user",
        "assistant",
        "user",
    ]
    assert round_2_request["messages"][2]["content"] == first.text
    assert round_2_request["messages"][3]["content"] == followup.text
    simulator_request = next(r for r in chat_server.requests if r["model"] == "simulator-model")
    assert (
        "海贼王" in simulator_request["messages"][0]["content"]
        or "夏目" in simulator_request["messages"][0]["content"]
    )
    # The exact system prompt is kept with the answer, and the figures of its call.
    assert first.system_prompt == round_2_request["messages"][0]["content"]
    assert first.prompt.version == 1 and "路飞" in first.system_prompt
    assert first.tokens_in > 0 and first.tokens_out > 0 and first.finish_reason == "stop"
    assert ApiCall.objects.filter(outcome=CallOutcome.OK).count() == 12  # 8 answers, 4 follow-ups
    # Answer of round 2 in the dialogues app carries the simulated question.
    assert Answer.objects.get(pk=second.answer_id).question == followup.text


def test_a_second_run_fills_only_the_gaps(scenarios, keys, chat_server):
    collect(chat_server)
    gap = GeneratedAnswer.objects.get(character__key=LUFFY, scenario__number=2, round=2)
    Answer.objects.filter(pk=gap.answer_id).delete()
    gap.delete()
    calls_before = len(chat_server.requests)

    output = collect(chat_server)

    assert "Every requested answer exists" in output
    # The follow-up is kept, so only round 2 of that one dialogue is asked again.
    assert len(chat_server.requests) == calls_before + 1
    assert GeneratedAnswer.objects.count() == 8
    assert Answer.objects.filter(source__slug="my-model").count() == 8
    assert CollectionRun.objects.count() == 2


def test_transient_errors_are_retried_and_recorded(scenarios, keys, chat_server, settings):
    settings.COLLECTION_RETRY_ATTEMPTS = 6
    chat_server.script(("rate_limited", 0), "server_error", "malformed", ("timeout", 1), "ok")
    ModelEndpoint.objects.create(
        name="my-model", base_url=chat_server.url, model="x", timeout_seconds=0.5
    )

    collect(chat_server, "--concurrency", "1", "--characters", LUFFY, "--scenarios", "1",
            "--rounds", "1")  # fmt: skip

    assert GeneratedAnswer.objects.count() == 1
    retried = list(ApiCall.objects.filter(outcome=CallOutcome.RETRIED).order_by("id"))
    assert [call.status_code for call in retried] == [429, 500, 200, None]
    assert "Timeout" in retried[3].error
    assert "unreadable reply" in retried[2].error


def test_a_cell_that_keeps_failing_is_reported_and_the_next_run_fills_it(
    scenarios, keys, chat_server
):
    chat_server.script(*["server_error"] * 8)  # two passes of four attempts

    with pytest.raises(CommandError, match="still missing after retries"):
        collect(chat_server, "--concurrency", "1", "--characters", LUFFY, "--scenarios", "1",
                "--rounds", "1")  # fmt: skip

    run = CollectionRun.objects.get()
    assert run.failures.get().error.startswith("gave up after 4 attempts")
    assert ApiCall.objects.filter(outcome=CallOutcome.GAVE_UP).count() == 2

    collect(chat_server, "--characters", LUFFY, "--scenarios", "1", "--rounds", "1")
    assert GeneratedAnswer.objects.count() == 1
    assert not run.failures.exists()


def test_an_unknown_model_stops_the_run_and_keeps_what_was_collected(scenarios, keys, chat_server):
    collect(chat_server, "--scenarios", "1")
    chat_server.known_models = {"simulator-model"}

    with pytest.raises(CommandError, match=r"permanent error.*does not exist"):
        collect(chat_server, "--model", "no-such-model")

    run = CollectionRun.objects.get(status=RunStatus.FAILED)
    assert "no-such-model" in run.error
    assert GeneratedAnswer.objects.count() == 4
    assert ApiCall.objects.filter(outcome=CallOutcome.PERMANENT).count() >= 1
    # Fixed and started again, the same run finishes.
    collect(chat_server, "--model", "simulator-model")
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED
    assert GeneratedAnswer.objects.count() == 8


def test_a_request_the_endpoint_refuses_fails_its_dialogue_not_the_run(
    scenarios, keys, chat_server
):
    # Both dialogues are refused once; the command's second pass gets the second one.
    chat_server.script("bad_request", "bad_request", "bad_request")

    with pytest.raises(CommandError, match="content filter"):
        collect(chat_server, "--concurrency", "1", "--characters", LUFFY, "--rounds", "1")

    run = CollectionRun.objects.get()
    assert run.status == RunStatus.RUNNING
    assert GeneratedAnswer.objects.count() == 1  # the other dialogue was collected
    assert run.failures.count() == 1
    assert len(chat_server.requests) == 4  # refused requests are not retried


def test_a_bad_key_stops_the_run_with_a_clear_message(scenarios, keys, chat_server):
    chat_server.api_key = "sk-the-right-one"

    with pytest.raises(CommandError, match="Incorrect API key"):
        collect(chat_server)

    assert CollectionRun.objects.get().status == RunStatus.FAILED
    assert GeneratedAnswer.objects.count() == 0
    # The key itself is never stored or echoed.
    assert not ApiCall.objects.filter(error__contains="sk-responder-secret").exists()


def test_without_scenarios_it_collects_every_scenario_the_database_holds(
    scenarios, keys, chat_server
):
    """The database holds scenarios 1 and 2 only, as after importing a small answer set."""
    collect(chat_server, "--characters", LUFFY, "--rounds", "1", scenarios=None)

    numbers = GeneratedAnswer.objects.values_list("scenario__number", flat=True)
    assert sorted(numbers) == [1, 2]


def test_without_scenarios_in_the_database_it_says_what_to_import(db):
    with pytest.raises(services.CollectionError, match="no scenarios yet; import"):
        services.scenarios_numbered(None)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--characters", "无名氏"], "unknown character"),
        (["--scenarios", "0-61"], "outside 1-60"),
        (["--scenarios", "5-3"], "runs backwards"),
        (["--scenarios", "a-b"], "must look like"),
        (["--scenarios", "3-5"], "not in the database"),
        (["--rounds", "3"], "rounds must be"),
        (["--concurrency", "0"], "at least 1"),
    ],
)
def test_bad_input_gets_a_clear_error_and_creates_nothing(
    scenarios, keys, chat_server, arguments, message
):
    sources_before = Source.objects.count()

    with pytest.raises(CommandError, match=message) as refused:
        collect(chat_server, *arguments)

    assert ".;" not in str(refused.value)  # one sentence, not a full stop then a clause
    assert Source.objects.count() == sources_before
    assert not ModelEndpoint.objects.exists()
    assert not CollectionRun.objects.exists()
    assert chat_server.requests == []


def test_a_missing_key_variable_gets_a_clear_error_and_creates_nothing(
    scenarios, chat_server, monkeypatch
):
    monkeypatch.setenv("TEST_SIMULATOR_KEY", "sk-x")
    monkeypatch.delenv("TEST_MODEL_KEY", raising=False)

    with pytest.raises(CommandError, match=r"TEST_MODEL_KEY .* is not set"):
        collect(chat_server)

    assert not ModelEndpoint.objects.exists()
    assert not Source.objects.filter(slug="my-model").exists()


def test_a_human_source_cannot_be_collected_into(scenarios, keys, chat_server):
    with pytest.raises(CommandError, match="holds human answers"):
        collect(chat_server, source="human")
    assert not CollectionRun.objects.exists()


def test_flagged_answers_wait_for_review_and_staff_accept_edit_or_regenerate(
    scenarios, keys, chat_server, django_user_model
):
    staff = django_user_model.objects.create_user("staff@example.com", is_staff=True)
    # Answers are asked in a known order at concurrency 1: round 1, follow-up, round 2.
    chat_server.script("english", "ok", "as_an_ai", "truncated", "ok", "empty")
    collect(chat_server, "--concurrency", "1", "--characters", LUFFY)

    flagged = {
        (g.scenario.number, g.round): g
        for g in GeneratedAnswer.objects.filter(review_status=ReviewStatus.FLAGGED)
    }
    assert {key: g.flags for key, g in flagged.items()} == {
        (1, 1): [guards.NOT_CHINESE],
        (1, 2): [guards.BREAKS_CHARACTER],
        (2, 1): [guards.TRUNCATED],
        (2, 2): [guards.EMPTY],
    }
    # Only accepted answers belong to the source.
    assert not Answer.objects.filter(source__slug="my-model").exists()

    services.generated_answer_accept(generated=flagged[(2, 1)], by=staff)
    services.generated_answer_accept(generated=flagged[(1, 2)], by=staff, text="别怕，有我在！")
    answers = Answer.objects.filter(source__slug="my-model")
    assert sorted(answers.values_list("text", flat=True)) == sorted(
        ["别怕，有我在！", flagged[(2, 1)].text]
    )
    edit = AnswerEdit.objects.get(action="edit")
    assert edit.editor == staff and edit.text_after == "别怕，有我在！"
    assert "作为一个AI" in edit.text_before

    with pytest.raises(services.CollectionError, match="already accepted"):
        services.generated_answer_regenerate(generated=flagged[(1, 1)], by=staff)

    services.generated_answer_regenerate(generated=flagged[(2, 2)], by=staff)
    renewed = GeneratedAnswer.objects.get(scenario__number=2, round=2)
    assert renewed.review_status == ReviewStatus.ACCEPTED and renewed.text
    assert AnswerEdit.objects.filter(action="regenerate", cell__contains="r2").exists()
    with pytest.raises(services.CollectionError, match="not waiting for review"):
        services.generated_answer_accept(generated=renewed, by=staff)


def test_export_answers_writes_a_file_that_import_chatanime_reads_back(
    scenarios, keys, chat_server, tmp_path
):
    collect(chat_server)
    before = sorted(
        Answer.objects.filter(source__slug="my-model").values_list(
            "character__key", "scenario__number", "round", "question", "text"
        )
    )
    output = tmp_path / "export"

    call_command("export_answers", "--source", "my-model", "-o", str(output), stdout=io.StringIO())

    content = json.loads((output / "my-model.json").read_text(encoding="utf-8"))
    assert set(content) == {"_source", LUFFY, "《夏目友人帐》的夏目贵志"}
    assert content["_source"] == {"kind": "llm", "display_name": "my-model"}
    assert [d["dialog_id"] for d in content[LUFFY]] == [1, 2]
    GeneratedAnswer.objects.update(answer=None)
    Answer.objects.filter(source__slug="my-model").delete()
    report = import_chatanime(output)
    assert report.answers_created == 8
    after = sorted(
        Answer.objects.filter(source__slug="my-model").values_list(
            "character__key", "scenario__number", "round", "question", "text"
        )
    )
    assert after == before


def test_export_answers_refuses_an_unknown_source(tmp_path):
    with pytest.raises(CommandError, match="no source 'nobody'"):
        call_command("export_answers", "--source", "nobody", "-o", str(tmp_path))


def test_a_prompt_edited_by_staff_is_used_and_stored_with_the_next_answers(
    scenarios, keys, chat_server
):
    collect(chat_server, "--characters", LUFFY, "--scenarios", "1", "--rounds", "1")
    first_prompt = CharacterPrompt.objects.get()
    CharacterPrompt.objects.create(
        character=first_prompt.character, version=2, template="你是{name}，来自《{work}》。"
    )

    collect(chat_server, "--characters", LUFFY, "--scenarios", "2", "--rounds", "1")

    newest = GeneratedAnswer.objects.get(scenario__number=2)
    assert newest.prompt.version == 2
    assert newest.system_prompt == "你是蒙奇·D·路飞，来自《海贼王》。"
    assert GeneratedAnswer.objects.get(scenario__number=1).prompt.version == 1


def test_the_endpoint_concurrency_limit_holds(scenarios, keys, chat_server):
    chat_server.delay = 0.05

    collect(chat_server, "--concurrency", "2")

    assert chat_server.most_in_flight <= 2
    assert GeneratedAnswer.objects.count() == 8


def test_export_answers_writes_nothing_when_no_dialogue_has_both_rounds(
    scenarios, keys, chat_server, tmp_path
):
    collect(chat_server, "--rounds", "1")

    with pytest.raises(CommandError, match="no dialogue with both rounds"):
        call_command("export_answers", "--source", "my-model", "-o", str(tmp_path / "out"))

    assert not (tmp_path / "out" / "my-model.json").exists()
