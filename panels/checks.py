"""Instructional attention checks, as Prolific's attention-check policy allows them.

Each check tells the participant, in the question itself, which answer to give ("to show
you are reading, choose ..."): no memory of earlier pages, no knowledge assumed, in the
page's ordinary type, and a different question each time a participant meets one. A
participant fails the study's checks after failing two of them (one is enough in a study
shorter than five minutes), never one; a check staff find unclear is set aside and its
failures stop counting (`services.check_void`).

Pure functions only: the records are `models.CheckAnswer` and the study's settings
(`PanelStudy.check_positions`, `voided_checks`)."""

from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    key: str
    zh: str
    en: str


@dataclass(frozen=True)
class Check:
    """One question of the bank. `key` is stored with every answer: never rename one."""

    key: str
    zh: str
    en: str
    choices: tuple[Choice, ...]
    instructed: str

    def prompt(self, language: str) -> str:
        return self.zh if _chinese(language) else self.en

    def labelled_choices(self, language: str) -> list[tuple[str, str]]:
        """(key, label) of every answer offered, in the page's language."""
        chinese = _chinese(language)
        return [(choice.key, choice.zh if chinese else choice.en) for choice in self.choices]


def _chinese(language: str) -> bool:
    return (language or "").lower().startswith("zh")


AGREEMENT = (
    Choice("strongly_agree", "非常同意", "Strongly agree"),
    Choice("agree", "同意", "Agree"),
    Choice("neutral", "既不同意也不反对", "Neither agree nor disagree"),
    Choice("disagree", "不同意", "Disagree"),
    Choice("strongly_disagree", "非常不同意", "Strongly disagree"),
)

BANK: tuple[Check, ...] = (
    Check(
        key="agree-strongly-disagree",
        zh="动漫角色说话应当总是很正式。为了表明你在认真阅读，无论你怎么想，请选择“非常不同意”。",
        en=(
            "Anime characters should always speak formally. To show that you are reading "
            "carefully, please choose “Strongly disagree”, whatever you think."
        ),
        choices=AGREEMENT,
        instructed="strongly_disagree",
    ),
    Check(
        key="number-two",
        zh="这一题与你评测的回答无关。为了表明你在认真作答，请选择数字 2。",
        en=(
            "This question is not about the answers you rated. To show that you are paying "
            "attention, please choose the number 2."
        ),
        choices=tuple(Choice(str(n), str(n), str(n)) for n in range(1, 6)),
        instructed="2",
    ),
    Check(
        key="colour-blue",
        zh="你最喜欢哪种颜色？这一题用于检查注意力：无论你最喜欢什么颜色，请选择“蓝色”。",
        en=(
            "Which colour do you like best? This question checks your attention: please "
            "choose “Blue”, whatever your favourite colour is."
        ),
        choices=(
            Choice("red", "红色", "Red"),
            Choice("green", "绿色", "Green"),
            Choice("blue", "蓝色", "Blue"),
            Choice("yellow", "黄色", "Yellow"),
            Choice("purple", "紫色", "Purple"),
        ),
        instructed="blue",
    ),
    Check(
        key="fruit-apple",
        zh="为了表明你在作答前读完了题目，请从下列选项中选择“苹果”。",
        en="To show that you read the question before answering, please choose “Apple” below.",
        choices=(
            Choice("banana", "香蕉", "Banana"),
            Choice("orange", "橙子", "Orange"),
            Choice("apple", "苹果", "Apple"),
            Choice("grape", "葡萄", "Grape"),
            Choice("pear", "梨", "Pear"),
        ),
        instructed="apple",
    ),
    Check(
        key="season-winter",
        zh="你最喜欢哪个季节？为了表明你在认真阅读，无论你喜欢哪个季节，请选择“冬天”。",
        en=(
            "Which season do you like most? To show that you are reading, please choose "
            "“Winter”, whatever season you prefer."
        ),
        choices=(
            Choice("spring", "春天", "Spring"),
            Choice("summer", "夏天", "Summer"),
            Choice("autumn", "秋天", "Autumn"),
            Choice("winter", "冬天", "Winter"),
        ),
        instructed="winter",
    ),
)
BY_KEY = {check.key: check for check in BANK}

# Under this many minutes a study may reject after one failed check; otherwise after two.
SHORT_STUDY_MINUTES = 5


def failure_threshold(minutes: int) -> int:
    """How many failed checks end a participant's batch (Prolific: two in a study of five
    minutes or more, one in a shorter study)."""
    return 1 if minutes < SHORT_STUDY_MINUTES else 2


def due_position(positions: Sequence[int], *, rated: int, answered_up_to: int) -> int | None:
    """The check the participant owes: the first position they have reached (`rated`
    items or more) after the last one they answered (`answered_up_to`, 0 for none).
    Checks are answered in order, so a position staff add behind one already answered is
    not asked for afterwards."""
    for position in sorted(positions):
        if answered_up_to < position <= rated:
            return position
    return None


def check_shown(
    *, participant_id: int, position: int, positions: Sequence[int], voided: Collection[str] = ()
) -> Check | None:
    """The check a participant is shown at `position`: the same every time it is asked,
    a different one at each of the study's positions (while the bank has enough that
    are not voided), and never a voided one; None once every check is voided."""
    available = [check for check in BANK if check.key not in voided]
    if not available:
        return None
    ordinal = sum(1 for other in positions if other < position)
    return available[(participant_id + ordinal) % len(available)]


def is_choice(check: Check, chosen: str) -> bool:
    return any(choice.key == chosen for choice in check.choices)


def passes(check: Check, chosen: str) -> bool:
    """Whether `chosen` is the answer the check told the participant to give."""
    return chosen == check.instructed
