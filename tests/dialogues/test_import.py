import json

import pytest
from django.core.management import CommandError, call_command

from dialogues.importer import normalize_question, split_character_key
from dialogues.models import Answer, Character, Scenario, Source, SourceKind
from tests.fixtures.data import (
    DEMO_DATA,
    SCENARIO_1,
    SCENARIO_2,
    dialogue,
    small_source,
    write_source,
)

pytestmark = pytest.mark.django_db


def run_import(path):
    from io import StringIO

    out = StringIO()
    call_command("import_chatanime", str(path), stdout=out, stderr=out)
    return out.getvalue()


def failed_import(path):
    """Run an import that must fail; return everything it reported."""
    from io import StringIO

    err = StringIO()
    with pytest.raises(CommandError) as failure:
        call_command("import_chatanime", str(path), stdout=StringIO(), stderr=err)
    return f"{err.getvalue()}\n{failure.value}"


def database_counts():
    return tuple(m.objects.count() for m in (Source, Character, Scenario, Answer))


def test_it_splits_character_keys_into_work_and_name():
    assert split_character_key("《海贼王》的蒙奇·D·路飞") == ("海贼王", "蒙奇·D·路飞")
    assert split_character_key("《Fate Zero》的Saber（阿尔托莉雅·潘德拉贡）") == (
        "Fate Zero",
        "Saber（阿尔托莉雅·潘德拉贡）",
    )
    assert split_character_key("蒙奇·D·路飞") is None


def test_it_folds_the_tilde_variants_of_the_published_data():
    assert normalize_question("晒太阳了~") == normalize_question("晒太阳了～")
    assert normalize_question("晒太阳了") != normalize_question("晒太阳了～")


def test_it_imports_a_directory_of_sources(chatanime_dir):
    output = run_import(chatanime_dir)

    assert "answers: 16 created" in output
    assert Source.objects.get(slug="human").kind == SourceKind.HUMAN
    assert Source.objects.get(slug="gpt-4.1").kind == SourceKind.LLM
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    assert luffy.work_zh == "海贼王"
    scenario = Scenario.objects.get(number=1)
    assert scenario.question == SCENARIO_1
    assert scenario.persona_group == "student"
    round_2 = Answer.objects.get(character=luffy, scenario=scenario, source__slug="human", round=2)
    assert round_2.question == "可是我还是害怕怎么办？(1)"
    assert round_2.text == "害怕也没关系，先迈出一小步。(1)"


def test_it_imports_a_single_file(chatanime_dir):
    run_import(chatanime_dir / "human.json")

    assert list(Source.objects.values_list("slug", flat=True)) == ["human"]
    assert Answer.objects.count() == 8


def test_a_second_run_changes_nothing_and_says_so(chatanime_dir):
    run_import(chatanime_dir)
    before = list(Answer.objects.order_by("id").values_list("id", "text"))

    output = run_import(chatanime_dir)

    assert "Nothing changed" in output
    assert "16 unchanged" in output
    assert list(Answer.objects.order_by("id").values_list("id", "text")) == before


def test_a_corrected_answer_is_updated_in_place(chatanime_dir):
    run_import(chatanime_dir)
    answer_id = Answer.objects.get(
        source__slug="human", scenario__number=1, round=1, character__name_zh="蒙奇·D·路飞"
    ).id
    write_source(chatanime_dir, "human", small_source(answer_r1="改过的回答"))

    output = run_import(chatanime_dir)

    assert "1 updated" in output
    assert Answer.objects.get(id=answer_id).text == "改过的回答"


def test_it_accepts_the_tilde_variant_of_a_known_scenario(tmp_path):
    write_source(tmp_path, "human", {"《海贼王》的蒙奇·D·路飞": [dialogue(1, "晒太阳了~")]})
    write_source(tmp_path, "qwen-max", {"《海贼王》的蒙奇·D·路飞": [dialogue(1, "晒太阳了～")]})

    run_import(tmp_path)

    assert Scenario.objects.get().question == "晒太阳了~"
    assert Answer.objects.count() == 4


def test_the_demo_dataset_imports_cleanly():
    output = run_import(DEMO_DATA)

    assert "Import complete" in output
    assert Source.objects.filter(kind=SourceKind.HUMAN).count() == 1
    assert Source.objects.filter(kind=SourceKind.LLM).count() >= 2
    assert Answer.objects.count() == (
        Source.objects.count() * Character.objects.count() * Scenario.objects.count() * 2
    )
    groups = set(Scenario.objects.values_list("persona_group", flat=True))
    assert groups == {"student", "office_worker", "freelancer", "self_employed"}


BAD_INPUTS = {
    "invalid JSON": (b'{"x": [', ["bad.json", "invalid JSON", "line 1"]),
    "not UTF-8": ('{"《海贼王》的路飞": []}'.encode("gb18030"), ["bad.json", "not valid UTF-8"]),
    "a list at the top": (json.dumps([1, 2]), ["bad.json", "expected a non-empty JSON object"]),
    "a key that is not 《作品》的角色": (
        json.dumps({"路飞": [dialogue(1, SCENARIO_1)]}, ensure_ascii=False),
        ["bad.json", "character 路飞", "《作品》的角色"],
    ),
    "dialog_id as a string": (
        json.dumps({"《海贼王》的路飞": [dialogue("1", SCENARIO_1)]}, ensure_ascii=False),
        ["bad.json", "character 《海贼王》的路飞", "dialog_id 1", "must be an integer"],
    ),
    "dialog_id out of range": (
        json.dumps({"《海贼王》的路飞": [dialogue(61, SCENARIO_1)]}, ensure_ascii=False),
        ["dialog_id 61", "between 1 and 60"],
    ),
    "dialog_id zero": (
        json.dumps({"《海贼王》的路飞": [dialogue(0, SCENARIO_1)]}, ensure_ascii=False),
        ["dialog_id 0", "between 1 and 60"],
    ),
    "a duplicate dialog_id": (
        json.dumps(
            {"《海贼王》的路飞": [dialogue(2, SCENARIO_2), dialogue(2, SCENARIO_2)]},
            ensure_ascii=False,
        ),
        ["character 《海贼王》的路飞", "dialog_id 2", "duplicate dialog_id"],
    ),
    "a missing field": (
        json.dumps(
            {
                "《海贼王》的路飞": [
                    {k: v for k, v in dialogue(2, SCENARIO_2).items() if k != "answer_r2"}
                ]
            },
            ensure_ascii=False,
        ),
        ["dialog_id 2", "field answer_r2", "missing"],
    ),
    "an empty answer": (
        json.dumps(
            {"《海贼王》的路飞": [dialogue(2, SCENARIO_2, answer_r1="  ")]}, ensure_ascii=False
        ),
        ["dialog_id 2", "field answer_r1", "is empty"],
    ),
    "an answer that is a number": (
        json.dumps(
            {"《海贼王》的路飞": [dialogue(2, SCENARIO_2, answer_r1=5)]}, ensure_ascii=False
        ),
        ["field answer_r1", "must be a string, not int"],
    ),
    "an oversized answer": (
        json.dumps(
            {"《海贼王》的路飞": [dialogue(2, SCENARIO_2, answer_r2="啊" * 4001)]},
            ensure_ascii=False,
        ),
        ["field answer_r2", "4001 characters long; the limit is 4000"],
    ),
    "a NUL character in an answer": (
        json.dumps({"《海贼王》的路飞": [dialogue(2, SCENARIO_2, answer_r1="好\x00")]}),
        ["dialog_id 2", "field answer_r1", "contains a NUL character"],
    ),
    "an unpaired surrogate in a question": (
        json.dumps({"《海贼王》的路飞": [dialogue(2, SCENARIO_2, question_r2="\ud83d")]}),
        ["dialog_id 2", "field question_r2", "unpaired surrogate"],
    ),
    "a character key too long for the database": (
        json.dumps({f"《{'长' * 120}》的路飞": [dialogue(2, SCENARIO_2)]}, ensure_ascii=False),
        ["bad.json", "the character key is too long"],
    ),
    "JSON nested too deeply": (b"[" * 100_000, ["bad.json", "nested too deeply"]),
    "a source kind that is neither human nor llm": (
        json.dumps({"_source": {"kind": "robot"}, "《海贼王》的路飞": [dialogue(2, SCENARIO_2)]}),
        ["bad.json", "field _source", "kind must be 'human' or 'llm', not 'robot'"],
    ),
    "source metadata that is not an object": (
        json.dumps({"_source": "human", "《海贼王》的路飞": [dialogue(2, SCENARIO_2)]}),
        ["bad.json", "field _source", "must be an object"],
    ),
    "a display name that is not text": (
        json.dumps(
            {
                "_source": {"kind": "human", "display_name": 5},
                "《海贼王》的路飞": [dialogue(2, SCENARIO_2)],
            }
        ),
        ["bad.json", "field _source", "display_name must be text"],
    ),
    "source metadata and no dialogue": (
        json.dumps({"_source": {"kind": "human"}}),
        ["bad.json", "holds no dialogues"],
    ),
    "an author that is not a pseudonym": (
        json.dumps({"《海贼王》的路飞": [dialogue(2, SCENARIO_2, author=["wendy"])]}),
        ["dialog_id 2", "field author", "must be a pseudonym"],
    ),
    "a scenario that contradicts another file": (
        json.dumps({"《海贼王》的路飞": [dialogue(1, "完全不同的场景")]}, ensure_ascii=False),
        ["bad.json", "dialog_id 1", "field question_r1", "differs from scenario 1"],
    ),
}


@pytest.mark.parametrize("content,expected", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_is_reported_precisely_and_writes_nothing(chatanime_dir, content, expected):
    write_source(chatanime_dir, "bad", content)

    report = failed_import(chatanime_dir)

    for fragment in expected:
        assert fragment in report
    assert "nothing was written" in report
    assert database_counts() == (0, 0, 0, 0)


def test_a_bad_file_leaves_an_earlier_import_untouched(chatanime_dir, tmp_path_factory):
    run_import(chatanime_dir)
    before = database_counts()
    second = tmp_path_factory.mktemp("second")
    write_source(second, "claude", small_source(answer_r1="新的"))
    write_source(second, "broken", b"{not json")

    failed_import(second)

    assert database_counts() == before
    assert not Source.objects.filter(slug="claude").exists()


def test_a_scenario_that_contradicts_the_database_is_refused(chatanime_dir, tmp_path_factory):
    run_import(chatanime_dir)
    later = tmp_path_factory.mktemp("later")
    write_source(later, "kimi", {"《海贼王》的蒙奇·D·路飞": [dialogue(2, "另一个场景")]})

    report = failed_import(later)

    assert "differs from scenario 2 as given in the database" in report
    assert not Source.objects.filter(slug="kimi").exists()


def test_another_data_set_on_the_same_database_is_named_with_the_way_out(tmp_path_factory):
    """The demo numbers its scenarios as the published data does, with texts of its own:
    after `make run`, importing the published data meets every scenario. The refusal says
    why and where to import instead; a clash between two new files gets no such advice."""
    run_import(DEMO_DATA)
    before = database_counts()
    published = tmp_path_factory.mktemp("published")
    write_source(
        published,
        "kimi",
        {"《海贼王》的蒙奇·D·路飞": [dialogue(1, "另一个场景"), dialogue(16, "又一个场景")]},
    )

    report = failed_import(published)

    assert "Scenarios 1, 16 are already in this database with other texts" in report
    assert "make run DATA=PATH" in report
    assert database_counts() == before

    two_files = tmp_path_factory.mktemp("two_files")
    write_source(two_files, "a", {"《海贼王》的蒙奇·D·路飞": [dialogue(90, "场景甲")]})
    write_source(two_files, "b", {"《海贼王》的蒙奇·D·路飞": [dialogue(90, "场景乙")]})
    assert "already in this database" not in failed_import(two_files)


def test_it_reports_a_missing_path(tmp_path):
    assert "no such file or directory" in failed_import(tmp_path / "nowhere")


def test_it_reports_a_directory_without_json(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    assert "contains no .json files" in failed_import(tmp_path)


def test_it_lists_every_problem_not_just_the_first(chatanime_dir):
    write_source(
        chatanime_dir,
        "bad",
        {"《海贼王》的路飞": [dialogue(70, SCENARIO_1), dialogue(2, SCENARIO_2, answer_r1="")]},
    )

    report = failed_import(chatanime_dir)

    assert "dialog_id 70" in report and "field answer_r1" in report
    assert "2 problem(s)" in report


def fans_source(kind="human", **metadata):
    return {"_source": {"kind": kind, **metadata}, **small_source(author="fan-7f3a")}


def test_a_file_that_says_it_holds_fans_answers_imports_as_human(tmp_path):
    write_source(tmp_path, "fans-2026", fans_source(display_name="Fans, spring 2026"))

    run_import(tmp_path)

    source = Source.objects.get(slug="fans-2026")
    assert (source.kind, source.display_name) == (SourceKind.HUMAN, "Fans, spring 2026")
    labels = Answer.objects.filter(source=source).values_list(
        "character__name_zh", "scenario__number", "round", "author_label"
    )
    by_answer = {(name, number, round_): label for name, number, round_, label in labels}
    assert by_answer[("蒙奇·D·路飞", 1, 1)] == by_answer[("蒙奇·D·路飞", 1, 2)] == "fan-7f3a"
    assert by_answer[("蒙奇·D·路飞", 2, 1)] == by_answer[("夏目贵志", 1, 1)] == ""


def test_a_file_that_says_it_holds_a_models_answers_imports_as_a_model_even_named_human(
    tmp_path,
):
    write_source(tmp_path, "human", fans_source(kind="llm"))

    run_import(tmp_path)

    assert Source.objects.get(slug="human").kind == SourceKind.LLM


def test_a_stated_kind_that_contradicts_a_held_source_is_refused_and_writes_nothing(tmp_path):
    earlier, later = tmp_path / "earlier", tmp_path / "later"
    earlier.mkdir(), later.mkdir()
    write_source(earlier, "fans-2026", small_source())
    run_import(earlier)
    assert Source.objects.get(slug="fans-2026").kind == SourceKind.LLM
    before = database_counts()
    write_source(later, "fans-2026", fans_source())
    write_source(later, "other-model", small_source())

    report = failed_import(later)

    assert "fans-2026.json: field _source: says the source 'fans-2026' is human fans'" in report
    assert "held here as a model's answers" in report
    assert "nothing was written" in report
    assert database_counts() == before
    assert not Source.objects.filter(slug="other-model").exists()
    assert Source.objects.get(slug="fans-2026").kind == SourceKind.LLM


def test_a_file_that_states_no_kind_takes_the_held_source_as_it_is(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    write_source(first, "fans-2026", fans_source())
    run_import(first)
    write_source(second, "fans-2026", small_source(answer_r1="改过的回答"))

    output = run_import(second)

    assert "1 updated" in output
    assert Source.objects.get(slug="fans-2026").kind == SourceKind.HUMAN
    # A file that names no author leaves the known one in place.
    assert (
        Answer.objects.get(
            source__slug="fans-2026", character__name_zh="蒙奇·D·路飞", scenario__number=1, round=1
        ).author_label
        == "fan-7f3a"
    )


def test_the_published_characters_get_their_english_names(tmp_path):
    """The data files name characters in Chinese only; English pages show these names."""
    write_source(
        tmp_path, "human", {"《紫罗兰永恒花园》的薇尔莉特·伊芙加登": [dialogue(1, "场景")]}
    )
    run_import(tmp_path)

    violet = Character.objects.get()
    assert (violet.work_en, violet.name_en) == ("Violet Evergarden", "Violet Evergarden")
    assert (violet.work_zh, violet.name_zh) == ("紫罗兰永恒花园", "薇尔莉特·伊芙加登")


def test_the_migration_fills_english_names_staff_have_not_given():
    from importlib import import_module

    from django.apps import apps

    fill = import_module("dialogues.migrations.0004_character_english_names").fill_english_names
    luffy = Character.objects.create(
        key="《海贼王》的蒙奇·D·路飞", work_zh="海贼王", name_zh="蒙奇·D·路飞"
    )
    named = Character.objects.create(
        key="《银魂》的坂田银时", work_zh="银魂", name_zh="坂田银时", name_en="Gin-san"
    )

    fill(apps, None)

    luffy.refresh_from_db(), named.refresh_from_db()
    assert (luffy.work_en, luffy.name_en) == ("One Piece", "Monkey D. Luffy")
    assert (named.work_en, named.name_en) == ("Gintama", "Gin-san")
