"""Checks on what a model returned, before anyone rates it. Pure functions: text in,
flags out. A flagged answer waits for staff; an unflagged one is accepted at once."""

import re

EMPTY = "empty"
TRUNCATED = "truncated"
NOT_CHINESE = "not_chinese"
BREAKS_CHARACTER = "breaks_character"
NAMES_MODEL = "names_model"

FLAG_LABELS = {
    EMPTY: "empty answer",
    TRUNCATED: "cut off at the token limit",
    NOT_CHINESE: "not written in Chinese",
    BREAKS_CHARACTER: "steps out of character",
    NAMES_MODEL: "names a model or its maker",
}

# Below this share of Han characters among the letters, the answer is not Chinese; the
# margin allows for the odd English name or catchphrase a character says.
MIN_HAN_SHARE = 0.6

OUT_OF_CHARACTER = re.compile(
    r"as an ai|as a language model|i am an ai|i'm an ai|ai language model|large language model|"
    r"作为一个?(ai|人工智能|语言模型|ai助手|虚拟助手|聊天机器人)|我是一个?(ai|人工智能|语言模型|虚拟助手|聊天机器人)|"
    r"语言模型|人工智能助手|ai助手|我只是一个?程序|我没有真实的(感受|情感|身体)",
    re.IGNORECASE,
)

# Model families and makers whose names in an answer give the source away to annotators.
KNOWN_MODEL_NAMES = (
    "chatgpt", "gpt-", "gpt4", "openai", "claude", "anthropic", "gemini", "llama", "qwen",
    "通义千问", "文心一言", "deepseek", "mistral", "glm", "智谱", "kimi", "moonshot", "豆包",
)  # fmt: skip

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
OTHER_LETTERS = re.compile(r"[A-Za-z\u3040-\u30ff\uac00-\ud7af\u0400-\u04ff]")


def model_name_variants(model: str) -> set[str]:
    """`Qwen/Qwen2.5-7B-Instruct:q4` is named in an answer as any of its parts."""
    model = model.lower().strip()
    variants = {model}
    variants.update(re.split(r"[/:]", model))
    # Short names ("m", "glm") would match inside ordinary words.
    return {v for v in variants if len(v) >= 4}


def answer_flags(text: str, *, finish_reason: str = "", model: str = "") -> list[str]:
    flags = []
    stripped = text.strip()
    if not stripped:
        return [EMPTY]
    if finish_reason == "length":
        flags.append(TRUNCATED)
    han = len(HAN.findall(stripped))
    other = len(OTHER_LETTERS.findall(stripped))
    if han == 0 or han / (han + other) < MIN_HAN_SHARE:
        flags.append(NOT_CHINESE)
    if OUT_OF_CHARACTER.search(stripped):
        flags.append(BREAKS_CHARACTER)
    lowered = stripped.lower()
    names = set(KNOWN_MODEL_NAMES) | (model_name_variants(model) if model else set())
    if any(name in lowered for name in names):
        flags.append(NAMES_MODEL)
    return flags
