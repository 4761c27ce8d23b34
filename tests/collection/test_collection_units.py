"""Pure parts of answer collection: the guards, the selection parsers, the limiters, the
errors of an endpoint whose key cannot be read."""

import threading
import time
import uuid

import pytest
from django.utils import translation

from collection import guards
from collection.client import backoff_seconds
from collection.limiter import _LocalLimiter, _RedisLimiter
from collection.models import EndpointKeyMissing, ModelEndpoint
from collection.services import (
    CollectionError,
    numbers_as_ranges,
    parse_rounds,
    parse_scenario_numbers,
)


@pytest.mark.parametrize(
    "text, flags",
    [
        ("别担心！我们一起想办法，一步一步来。", []),
        ("别怕！就像我和Zoro一起冒险时那样，总会有办法的！", []),
        ("", [guards.EMPTY]),
        ("   ", [guards.EMPTY]),
        ("Don't worry, we will figure it out together!", [guards.NOT_CHINESE]),
        ("大丈夫だよ、一緒に頑張ろうね！", [guards.NOT_CHINESE]),
        ("作为一个AI，我没有感受，但我可以给你建议。", [guards.BREAKS_CHARACTER]),
        ("我只是一个语言模型，不过别难过。", [guards.BREAKS_CHARACTER]),
        ("我是ChatGPT，很高兴能听你说说心里的烦恼，别难过啦。", [guards.NAMES_MODEL]),
    ],
)
def test_the_guards_flag_what_annotators_should_not_see(text, flags):
    assert guards.answer_flags(text, finish_reason="stop") == flags


def test_an_answer_cut_off_at_the_token_limit_is_flagged():
    flags = guards.answer_flags("别担心，我们一起", finish_reason="length")
    assert flags == [guards.TRUNCATED]


def test_the_endpoint_model_name_in_an_answer_is_flagged():
    text = "嘿嘿，我是hushmodel-9b，不过先别管我是谁，说说你心里的烦恼和最近的事情吧！"
    assert guards.answer_flags(text, model="acme/HushModel-9B:q4") == [guards.NAMES_MODEL]
    # Short model names would match ordinary words; they are not looked for.
    assert guards.answer_flags("我们一起加油吧！", model="m") == []


@pytest.mark.parametrize(
    "text, numbers",
    [("1-3", [1, 2, 3]), ("5", [5]), ("1-2, 9,12-13", [1, 2, 9, 12, 13]), ("60", [60])],
)
def test_scenario_ranges_are_read(text, numbers):
    assert parse_scenario_numbers(text) == numbers


@pytest.mark.parametrize("text", ["", "0", "61", "1-61", "3-1", "a", "1-", "1;2"])
def test_bad_scenario_ranges_are_refused(text):
    with pytest.raises(CollectionError):
        parse_scenario_numbers(text)


def test_rounds_are_read_and_checked():
    assert parse_rounds("2,1") == [1, 2]
    for bad in ("", "3", "1,x", "0"):
        with pytest.raises(CollectionError):
            parse_rounds(bad)


def test_backoff_grows_and_honours_retry_after(settings):
    settings.COLLECTION_RETRY_BASE_SECONDS = 1
    settings.COLLECTION_RETRY_MAX_SECONDS = 10
    assert 0.5 <= backoff_seconds(1) <= 1
    assert 4 <= backoff_seconds(4) <= 8
    assert backoff_seconds(9) <= 10
    assert backoff_seconds(1, retry_after=7) == 7
    assert backoff_seconds(1, retry_after=700) == 10


def limiters(request):
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        return _RedisLimiter(url)
    return _LocalLimiter()


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def limiter(request):
    return limiters(request)


def test_no_more_than_the_concurrency_limit_hold_a_slot(limiter):
    key = f"test-{uuid.uuid4().hex}"
    lock = threading.Lock()
    holding, most = 0, 0
    gate = threading.Barrier(6)

    def call():
        nonlocal holding, most
        gate.wait()
        with limiter.slot(key, 2, lease_seconds=5):
            with lock:
                holding += 1
                most = max(most, holding)
            time.sleep(0.05)
            with lock:
                holding -= 1

    threads = [threading.Thread(target=call) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert most == 2


def test_the_rate_limit_makes_the_next_call_wait_once_the_minute_is_full(limiter):
    key = f"test-{uuid.uuid4().hex}"

    taken = [limiter.try_take(key, 3) for _ in range(3)]
    wait = limiter.try_take(key, 3)

    assert taken == [0, 0, 0]
    assert 0 < wait <= 60
    # Another endpoint has its own window.
    assert limiter.try_take(f"{key}-other", 3) == 0


@pytest.mark.parametrize(
    "numbers, text",
    [
        ([], ""),
        ([5], "5"),
        ([1, 2, 16, 17, 31, 32, 46, 47], "1-2,16-17,31-32,46-47"),
        ([3, 1, 2, 2, 9], "1-3,9"),
        (list(range(1, 61)), "1-60"),
    ],
)
def test_scenario_numbers_are_written_as_the_ranges_the_form_reads(numbers, text):
    assert numbers_as_ranges(numbers) == text
    if numbers:
        assert parse_scenario_numbers(text) == sorted(set(numbers))


def missing_key_message(language: str, **where) -> str:
    endpoint = ModelEndpoint(name="Judge", base_url="http://127.0.0.1:9/v1", model="m", **where)
    with translation.override(language), pytest.raises(EndpointKeyMissing) as refused:
        endpoint.api_key()
    return str(refused.value)


def test_a_missing_key_variable_says_where_it_must_be_set(monkeypatch):
    monkeypatch.delenv("NEVER_SET_KEY", raising=False)

    english = missing_key_message("en", api_key_env="NEVER_SET_KEY")
    chinese = missing_key_message("zh-hans", api_key_env="NEVER_SET_KEY")

    assert "NEVER_SET_KEY is not set" in english
    assert "where the web server and the workers run" in english
    assert chinese == (
        "端点“Judge”：环境变量 NEVER_SET_KEY 未设置。"
        "必须在运行网站服务器和后台进程的环境中设置它（设置后重启它们）。"
    )


def test_an_unreadable_or_empty_key_file_is_said_in_the_users_language(tmp_path):
    missing, empty = tmp_path / "missing.key", tmp_path / "empty.key"
    empty.write_text("  \n", encoding="utf-8")

    assert "cannot be read" in missing_key_message("en", api_key_file=str(missing))
    assert f"无法读取密钥文件 {missing}" in missing_key_message(
        "zh-hans", api_key_file=str(missing)
    )
    assert missing_key_message("zh-hans", api_key_file=str(empty)) == (
        f"端点“Judge”：密钥文件 {empty} 是空的。"
    )
