"""The out-of-the-box demo: quiz questions for the demo characters and a ready study, so
that a newcomer who logs in as a demo annotator can rate at once."""

from django.db import transaction

from dialogues.models import Character, Source, SourceKind

from . import services
from .models import (
    AnnotatorProfile,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    ScreeningQuestion,
    Study,
    StudyStatus,
)

DEMO_STUDY_NAME = "Demo study"
DEMO_RESULTS_NAME = "Demo results (simulated)"


def q(prompt_zh, prompt_en, choices, correct):
    return {
        "prompt_zh": prompt_zh,
        "prompt_en": prompt_en,
        "choices": [{"zh": zh, "en": en} for zh, en in choices],
        "correct_choice": correct,
    }


QUESTIONS = {
    "《海贼王》的蒙奇·D·路飞": [
        q(
            "路飞吃下的恶魔果实最初被称为什么？",
            "What was Luffy's Devil Fruit first called?",
            [
                ("橡胶果实", "Gum-Gum Fruit"),
                ("烧烧果实", "Flame-Flame Fruit"),
                ("响雷果实", "Rumble-Rumble Fruit"),
                ("花花果实", "Flower-Flower Fruit"),
            ],
            0,
        ),
        q(
            "路飞的梦想是什么？",
            "What is Luffy's dream?",
            [
                ("成为海军大将", "To become a Navy admiral"),
                ("成为海贼王", "To become King of the Pirates"),
                ("找到All Blue", "To find the All Blue"),
                ("画出世界地图", "To draw a map of the world"),
            ],
            1,
        ),
        q(
            "路飞的草帽最初是谁送给他的？",
            "Who first gave Luffy his straw hat?",
            [("卡普", "Garp"), ("艾斯", "Ace"), ("香克斯", "Shanks"), ("罗杰", "Roger")],
            2,
        ),
        q(
            "路飞最喜欢吃什么？",
            "What is Luffy's favourite food?",
            [("肉", "Meat"), ("橘子", "Tangerines"), ("拉面", "Ramen"), ("寿司", "Sushi")],
            0,
        ),
        q(
            "草帽一伙的第一位伙伴是谁？",
            "Who was the first to join the Straw Hat crew?",
            [("娜美", "Nami"), ("乌索普", "Usopp"), ("山治", "Sanji"), ("索隆", "Zoro")],
            3,
        ),
    ],
    "《夏目友人帐》的夏目贵志": [
        q(
            "夏目继承的“友人帐”原本属于谁？",
            "Whose was the Book of Friends before Natsume?",
            [
                ("他的外婆玲子", "His grandmother Reiko"),
                ("他的母亲", "His mother"),
                ("名取周一", "Shuuichi Natori"),
                ("的场静司", "Seiji Matoba"),
            ],
            0,
        ),
        q(
            "猫咪老师的真实身份是？",
            "What is Nyanko-sensei really?",
            [
                ("招财猫", "A lucky-cat statue"),
                ("妖怪斑", "The yokai Madara"),
                ("狐狸精", "A fox spirit"),
                ("神社的神明", "A shrine god"),
            ],
            1,
        ),
        q(
            "夏目把名字还给妖怪时需要做什么？",
            "What does Natsume do to return a name?",
            [
                ("烧掉那一页", "Burn the page"),
                ("大声念出名字", "Read the name aloud"),
                ("用嘴衔住纸张并吹气", "Hold the page in his lips and blow"),
                ("把纸埋进土里", "Bury the page"),
            ],
            2,
        ),
        q(
            "收养夏目的夫妇姓什么？",
            "What is the family name of the couple who took Natsume in?",
            [("藤原", "Fujiwara"), ("田沼", "Tanuma"), ("多轨", "Taki"), ("夏目", "Natsume")],
            0,
        ),
        q(
            "夏目能看见什么？",
            "What can Natsume see?",
            [
                ("未来", "The future"),
                ("人的心事", "People's thoughts"),
                ("妖怪", "Yokai"),
                ("过去的事", "The past"),
            ],
            2,
        ),
    ],
    "《紫罗兰永恒花园》的薇尔莉特·伊芙加登": [
        q(
            "薇尔莉特的职业是什么？",
            "What is Violet's profession?",
            [
                ("邮差", "Postwoman"),
                ("自动手记人偶（代笔人）", "Auto Memory Doll (ghostwriter)"),
                ("护士", "Nurse"),
                ("军官", "Officer"),
            ],
            1,
        ),
        q(
            "薇尔莉特一直想弄明白哪句话的含义？",
            "Which words does Violet want to understand?",
            [
                ("我爱你", "I love you"),
                ("再见", "Goodbye"),
                ("谢谢", "Thank you"),
                ("对不起", "I'm sorry"),
            ],
            0,
        ),
        q(
            "对薇尔莉特说出那句话的人是谁？",
            "Who said those words to Violet?",
            [
                ("霍金斯", "Hodgins"),
                ("吉尔伯特少佐", "Major Gilbert"),
                ("迪特弗里德", "Dietfried"),
                ("班奈狄克特", "Benedict"),
            ],
            1,
        ),
        q(
            "薇尔莉特的双手是什么样的？",
            "What are Violet's hands like?",
            [
                ("戴着白手套的机械义手", "Mechanical prostheses under gloves"),
                ("受过烧伤", "Burn-scarred"),
                ("只剩一只手", "She has only one"),
                ("完好无损", "Unharmed"),
            ],
            0,
        ),
        q(
            "薇尔莉特工作的公司叫什么？",
            "Where does Violet work?",
            [
                ("CH邮政公司", "CH Postal Company"),
                ("莱顿邮局", "Leiden Post Office"),
                ("布干维利亚商会", "Bougainvillea Trading"),
                ("国立图书馆", "National Library"),
            ],
            0,
        ),
    ],
}


@transaction.atomic
def demo_prepare(*, annotators) -> Study | None:
    """Idempotent: questions, an open study over the demo data, and the given annotators
    consented, quizzed and approved for every character of the study."""
    for key, questions in QUESTIONS.items():
        character = Character.objects.filter(key=key).first()
        if character is None:
            continue
        for question in questions:
            ScreeningQuestion.objects.get_or_create(
                character=character, prompt_zh=question["prompt_zh"], defaults=question
            )
    reference = Source.objects.filter(kind=SourceKind.HUMAN).order_by("pk").first()
    compared = list(Source.objects.filter(kind=SourceKind.LLM))
    characters = list(Character.objects.all())
    if reference is None or not compared or not characters:
        return None
    study = Study.objects.filter(name=DEMO_STUDY_NAME).first()
    if study is None:
        study = services.study_create(
            name=DEMO_STUDY_NAME,
            reference=reference,
            compared=compared,
            characters=characters,
            overlap=3,
            include_diversity=True,
            ask_human_guess=True,
        )
    services.study_open(study=study)
    for user in annotators:
        profile = services.consent_give(user=user)
        for character in characters:
            Qualification.objects.update_or_create(
                profile=profile,
                character=character,
                defaults={"status": QualificationStatus.APPROVED, "quiz_score": 1.0},
            )
        AnnotatorProfile.objects.filter(pk=profile.pk).update(status=ProfileStatus.APPROVED)
    return study


def demo_results_prepare() -> Study | None:
    """A second, simulated study so that the results pages have something to show from
    the first minute. Idempotent: simulated once."""
    from .simulation import annotators_for, simulate_study

    reference = Source.objects.filter(kind=SourceKind.HUMAN).order_by("pk").first()
    compared = list(Source.objects.filter(kind=SourceKind.LLM))
    if reference is None or not compared:
        return None
    study = Study.objects.filter(name=DEMO_RESULTS_NAME).first()
    if study is None:
        study = services.study_create(
            name=DEMO_RESULTS_NAME,
            reference=reference,
            compared=compared,
            characters=list(Character.objects.all()),
            rounds=(1,),
            overlap=2,
            include_diversity=True,
            ask_human_guess=True,
            gold_rate=0,
        )
        services.study_open(study=study)
        simulate_study(study=study, annotators=annotators_for(study), seed=7)
        # Closed, so that real annotators are never served its items: its results stay.
        services.study_set_status(study=study, status=StudyStatus.CLOSED)
    return study
