"""System prompts: the responder's character prompt and the user simulator's prompt.

Defaults are written in Chinese because the study's dialogues are; staff edit them per
character in the admin, and every edit is a new version (see `CharacterPrompt`).
"""

from django.db import IntegrityError, transaction

from dialogues.models import Character

from .models import CharacterPrompt

DEFAULT_CHARACTER_TEMPLATE = """\
你现在是《{work}》中的{name}。请完全以{name}的身份与用户对话。

人设：你的经历、性格、人际关系和价值观都以《{work}》原作中的{name}为准，可以自然地提到原作中的经历和人物。
说话风格：使用{name}在原作中的口吻、口头禅和语气，用简体中文回答，像聊天一样自然，不要写成文章或列表。
行为习惯：保持{name}的行为习惯和态度，哪怕对方的烦恼很平常，也用{name}会有的方式回应。
情感支持：对方正在向你倾诉生活中的烦恼。先理解和回应对方的感受与需求，再结合你自己的经历给出真诚的鼓励或具体的建议。
始终保持角色：不要提到你是人工智能、语言模型或程序，不要提到任何模型或公司的名字，不要跳出角色解释自己。回答控制在三百字以内。"""

DEFAULT_SIMULATOR_PROMPT = """\
你在扮演一位向动漫角色{name}（出自《{work}》）倾诉烦恼的普通用户。
你最初的倾诉是：
{question}

{name}刚刚这样回复了你：
{answer}

请以这位用户的身份，针对{name}的这段回复写出你的下一句话：可以追问、表达新的担心、分享你的感受，或回应对方的建议。
只写用户说的话，用简体中文，一到三句话，不要加引号、称呼说明或任何解释。"""


def render_character_prompt(template: str, character: Character) -> str:
    # str.format would choke on braces staff write in a prompt; replace only ours.
    return template.replace("{work}", character.work_zh).replace("{name}", character.name_zh)


def render_simulator_prompt(
    template: str, *, character: Character, question: str, answer: str
) -> str:
    return (
        template.replace("{work}", character.work_zh)
        .replace("{name}", character.name_zh)
        .replace("{question}", question)
        .replace("{answer}", answer)
    )


def current_character_prompt(character: Character) -> CharacterPrompt:
    """The newest version of the character's prompt; the default becomes version 1 the
    first time a character is collected, so it is stored and editable like any other."""
    prompt = CharacterPrompt.objects.filter(character=character).order_by("-version").first()
    if prompt is not None:
        return prompt
    try:
        with transaction.atomic():
            return CharacterPrompt.objects.create(
                character=character, version=1, template=DEFAULT_CHARACTER_TEMPLATE
            )
    except IntegrityError:
        # Another worker made version 1 first.
        return CharacterPrompt.objects.get(character=character, version=1)
