"""What the judge reads: the annotators' rubric (each metric's definition and its 1-5
anchors, in Chinese or English), and one blinded pair as the rating page shows it: the
character, the scenario, each answer's question and, in round 2, its own round-1 answer.
Nothing names a source. The wording is versioned: a change of it is a new
`PROMPT_VERSION`, so every judge run can say which words its figures rest on."""

import hashlib
import json
from dataclasses import dataclass

PROMPT_VERSION = "chatanime-judge/1"
SIDES = ("A", "B")  # left, right: the letters the annotators see
PREFERENCES = ("A", "B", "tie")

_INTRO = {
    "zh": (
        "你是一名熟悉动漫角色的评审。一位用户向动漫角色倾诉了日常烦恼，下面有两个回答（A 和 B），"
        "都在扮演这个角色安慰用户。请按照下面的评分标准，分别给两个回答的每一项指标打 1–5 分，"
        "然后说出你整体上更喜欢哪一个回答（A、B 或 tie 表示不分上下）。"
    ),
    "en": (
        "You are a judge who knows anime characters well. A user told an anime character about "
        "a daily struggle; below are two replies (A and B), each playing the character and "
        "comforting the user. Using the rubric below, rate each reply on every metric from 1 to "
        "5, then say which reply you prefer overall (A, B, or tie)."
    ),
}
_RUBRIC = {"zh": "评分标准", "en": "Rubric"}
_REPLY_FORMAT = {
    "zh": "只回复一个 JSON 对象，不要其他文字，格式如下：",
    "en": "Reply with one JSON object and nothing else, in this form:",
}
_CHARACTER = {"zh": "角色：《{work}》的{name}", "en": "Character: {name} from {work}"}
_SCENARIO = {"zh": "用户的烦恼（第一轮）：", "en": "The user's struggle (round 1):"}
_ROUND_1 = {"zh": "第一轮的回答：", "en": "Round-1 reply:"}
_QUESTION = {"zh": "用户的追问（第二轮）：", "en": "The user's follow-up (round 2):"}
REPLY_LABEL = {"zh": "待评分的回答：", "en": "The reply to rate:"}


@dataclass(frozen=True)
class RubricMetric:
    slug: str
    label: str
    definition: str
    anchors: tuple[str, ...]  # meanings of 1..5


@dataclass(frozen=True)
class ShownAnswer:
    text: str
    question: str  # the question this answer replies to
    context_answer: str = ""  # round 2: the same source's round-1 answer


def rubric_metrics(metrics, language: str) -> list[RubricMetric]:
    """The metrics (annotation's `Metric` rows) in the prompt's language."""
    suffix = "zh" if language == "zh" else "en"
    return [
        RubricMetric(
            slug=m.slug,
            label=getattr(m, f"label_{suffix}"),
            definition=getattr(m, f"definition_{suffix}"),
            anchors=tuple(m.anchors.get(str(v), {}).get(suffix, "") for v in range(1, 6)),
        )
        for m in metrics
    ]


def rubric_version(metrics: list[RubricMetric]) -> str:
    wording = json.dumps([m.__dict__ for m in metrics], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(wording.encode()).hexdigest()[:12]


def reply_example(metrics: list[RubricMetric]) -> dict:
    scores = {m.slug: 3 for m in metrics}
    return {"ratings": {"A": scores, "B": scores}, "preference": "A"}


def system_prompt(metrics: list[RubricMetric], language: str) -> str:
    lines = [_INTRO[language], "", f"{_RUBRIC[language]}:"]
    for m in metrics:
        lines.append(f"- {m.slug} ({m.label}): {m.definition}")
        lines.extend(f"    {value}: {meaning}" for value, meaning in enumerate(m.anchors, 1))
    lines += ["", _REPLY_FORMAT[language], json.dumps(reply_example(metrics), ensure_ascii=False)]
    return "\n".join(lines)


def pair_message(
    *, work: str, name: str, scenario: str, answers: list[ShownAnswer], language: str
) -> str:
    """The pair as the user turn: the left answer is A, the right one B."""
    lines = [_CHARACTER[language].format(work=work, name=name), _SCENARIO[language], scenario, ""]
    for letter, answer in zip(SIDES, answers, strict=True):
        tag = f"answer_{letter.lower()}"
        lines.append(f"<{tag}>")
        if answer.context_answer:
            lines += [_ROUND_1[language], answer.context_answer, _QUESTION[language]]
            lines += [answer.question]
        lines += [REPLY_LABEL[language], answer.text.replace(f"</{tag}>", ""), f"</{tag}>", ""]
    return "\n".join(lines).rstrip() + "\n"


def reply_schema(metrics: list[RubricMetric]) -> dict:
    """The JSON schema of a reply, for servers that take a `response_format`."""
    scores = {
        "type": "object",
        "properties": {m.slug: {"type": "integer", "minimum": 1, "maximum": 5} for m in metrics},
        "required": [m.slug for m in metrics],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "ratings": {
                "type": "object",
                "properties": {side: scores for side in SIDES},
                "required": list(SIDES),
                "additionalProperties": False,
            },
            "preference": {"type": "string", "enum": list(PREFERENCES)},
        },
        "required": ["ratings", "preference"],
        "additionalProperties": False,
    }


def response_format(metrics: list[RubricMetric]) -> dict:
    return {
        "type": "json_schema",
        "json_schema": {"name": "pair_ratings", "strict": True, "schema": reply_schema(metrics)},
    }
