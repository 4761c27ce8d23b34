"""The nine ChatAnime metrics and response diversity, in both UI languages.

Names follow the paper (basic dialogue, role-playing, emotional support; overall
diversity). The definitions and 1–5 anchors are ours. A data migration loads them; staff
can refine the wording in the admin afterwards.
"""

# Generic anchor scale, specialised per metric below where the wording matters.
METRICS = [
    {
        "slug": "fluency",
        "dimension": "basic",
        "label_zh": "流畅性",
        "label_en": "Fluency",
        "definition_zh": "回答是否通顺自然、用词得当、没有语病或错别字，读起来像一个真人在说话。",
        "definition_en": "Is the reply natural and well-formed, free of grammatical errors and typos, and does it read like a person speaking?",
        "anchors": {
            "1": {"zh": "难以读懂，错误很多", "en": "Hard to read, many errors"},
            "2": {"zh": "明显生硬或有多处错误", "en": "Clearly awkward or several errors"},
            "3": {"zh": "基本通顺，偶有生硬", "en": "Mostly smooth, some awkward spots"},
            "4": {"zh": "通顺自然，几乎无错", "en": "Smooth and natural, almost no errors"},
            "5": {"zh": "非常自然，无可挑剔", "en": "Perfectly natural"},
        },
    },
    {
        "slug": "coherency",
        "dimension": "basic",
        "label_zh": "连贯性",
        "label_en": "Coherency",
        "definition_zh": "回答是否紧扣用户刚说的话，前后逻辑清楚，不答非所问、不自相矛盾。",
        "definition_en": "Does the reply follow from what the user just said, with clear logic, without going off topic or contradicting itself?",
        "anchors": {
            "1": {"zh": "答非所问或逻辑混乱", "en": "Off topic or incoherent"},
            "2": {"zh": "只部分回应，跳跃明显", "en": "Only partly on topic, jumpy"},
            "3": {"zh": "回应了问题，逻辑一般", "en": "On topic, ordinary logic"},
            "4": {"zh": "回应到位，逻辑清楚", "en": "To the point, clear logic"},
            "5": {"zh": "完全切题，层次分明", "en": "Fully on point and well structured"},
        },
    },
    {
        "slug": "consistency",
        "dimension": "basic",
        "label_zh": "一致性",
        "label_en": "Consistency",
        "definition_zh": "回答与对话中已经说过的内容（包括第一轮的问答）保持一致，不前后矛盾、不遗忘上下文。",
        "definition_en": "Is the reply consistent with what was already said in the conversation (including round one), without contradictions or forgotten context?",
        "anchors": {
            "1": {"zh": "与上文明显矛盾", "en": "Clearly contradicts earlier turns"},
            "2": {"zh": "有不一致之处", "en": "Some inconsistencies"},
            "3": {"zh": "大体一致", "en": "Broadly consistent"},
            "4": {"zh": "一致，照应了上文", "en": "Consistent and builds on earlier turns"},
            "5": {"zh": "完全一致，衔接自然", "en": "Fully consistent, seamless"},
        },
    },
    {
        "slug": "character_knowledge",
        "dimension": "role_playing",
        "label_zh": "角色知识",
        "label_en": "Character knowledge",
        "definition_zh": "回答是否准确运用角色的经历、人际关系和作品中的设定，没有与原作矛盾的内容。",
        "definition_en": "Does the reply use the character's history, relationships and the work's setting accurately, with nothing that contradicts the original?",
        "anchors": {
            "1": {
                "zh": "与原作矛盾或完全不像该角色",
                "en": "Contradicts the original or unrelated to the character",
            },
            "2": {"zh": "几乎没有角色相关内容", "en": "Barely anything of the character"},
            "3": {"zh": "有一些正确的角色元素", "en": "Some correct character elements"},
            "4": {"zh": "恰当运用了角色知识", "en": "Uses character knowledge well"},
            "5": {"zh": "深入、准确、信手拈来", "en": "Deep, accurate and effortless"},
        },
    },
    {
        "slug": "speech_style",
        "dimension": "role_playing",
        "label_zh": "语言风格",
        "label_en": "Speech style",
        "definition_zh": "说话方式（口头禅、语气、用词、称呼）是否像这个角色本人。",
        "definition_en": "Does the way of speaking (catchphrases, tone, word choice, forms of address) sound like the character?",
        "anchors": {
            "1": {"zh": "完全不像该角色的口吻", "en": "Nothing like the character's voice"},
            "2": {"zh": "偶尔有点像", "en": "Occasionally like them"},
            "3": {"zh": "有一定角色口吻", "en": "Somewhat in their voice"},
            "4": {"zh": "很像该角色", "en": "Very much their voice"},
            "5": {"zh": "惟妙惟肖", "en": "Unmistakably them"},
        },
    },
    {
        "slug": "behavioral_habit",
        "dimension": "role_playing",
        "label_zh": "行为习惯",
        "label_en": "Behavioral habit",
        "definition_zh": "回答中体现的反应方式、处事态度和习惯性动作是否符合角色的性格。",
        "definition_en": "Do the reactions, attitudes and habitual actions in the reply fit the character's personality?",
        "anchors": {
            "1": {"zh": "与角色性格相悖", "en": "Goes against the character's personality"},
            "2": {"zh": "很少体现角色性格", "en": "Little of their personality"},
            "3": {"zh": "基本符合", "en": "Broadly fitting"},
            "4": {"zh": "符合且有特色", "en": "Fitting and distinctive"},
            "5": {"zh": "就是角色会做的事", "en": "Exactly what they would do"},
        },
    },
    {
        "slug": "demand_matching",
        "dimension": "emotional_support",
        "label_zh": "需求匹配",
        "label_en": "Demand matching",
        "definition_zh": "回答是否抓住了用户真正需要的东西（倾听、安慰、建议或鼓励），并给予相应的回应。",
        "definition_en": "Does the reply recognise what the user actually needs (to be heard, comforted, advised or encouraged) and respond to that?",
        "anchors": {
            "1": {"zh": "忽视了用户的需求", "en": "Ignores what the user needs"},
            "2": {"zh": "误解了需求", "en": "Misreads the need"},
            "3": {"zh": "部分满足需求", "en": "Partly meets the need"},
            "4": {"zh": "较好地满足需求", "en": "Meets the need well"},
            "5": {"zh": "精准回应了真正的需求", "en": "Precisely answers the real need"},
        },
    },
    {
        "slug": "experience_sharing",
        "dimension": "emotional_support",
        "label_zh": "经历分享",
        "label_en": "Experience sharing",
        "definition_zh": "角色是否分享了与用户处境相关的自身经历或感受，让用户感到被理解、不孤单。",
        "definition_en": "Does the character share a relevant experience or feeling of their own that makes the user feel understood and less alone?",
        "anchors": {
            "1": {"zh": "没有任何分享", "en": "No sharing at all"},
            "2": {"zh": "分享与处境无关", "en": "Sharing unrelated to the situation"},
            "3": {"zh": "有简单的相关分享", "en": "Some brief, relevant sharing"},
            "4": {"zh": "分享贴切，有共鸣", "en": "Apt sharing that resonates"},
            "5": {"zh": "分享真挚动人", "en": "Sincere and moving"},
        },
    },
    {
        "slug": "emotional_value",
        "dimension": "emotional_support",
        "label_zh": "情绪价值",
        "label_en": "Emotional value",
        "definition_zh": "读完这条回答后，用户的情绪是否可能得到安抚、鼓舞或感到温暖。",
        "definition_en": "After reading this reply, is the user likely to feel soothed, encouraged or warmed?",
        "anchors": {
            "1": {"zh": "可能让人更难受", "en": "May make the user feel worse"},
            "2": {"zh": "几乎没有情绪帮助", "en": "Hardly any emotional help"},
            "3": {"zh": "有些安慰", "en": "Some comfort"},
            "4": {"zh": "明显让人好受一些", "en": "Clearly makes the user feel better"},
            "5": {"zh": "非常温暖有力量", "en": "Deeply warming and uplifting"},
        },
    },
    {
        "slug": "diversity",
        "dimension": "overall",
        "label_zh": "回答多样性",
        "label_en": "Response diversity",
        "for_diversity": True,
        "definition_zh": "同一角色面对不同用户时，这组回答在内容、表达和安慰方式上是否丰富多样，而不是千篇一律。",
        "definition_en": "Across different users, do these replies of the same character vary in content, wording and ways of comforting, rather than repeating one template?",
        "anchors": {
            "1": {"zh": "几乎一模一样", "en": "Nearly identical"},
            "2": {"zh": "套路明显", "en": "Obviously formulaic"},
            "3": {"zh": "有一定变化", "en": "Some variety"},
            "4": {"zh": "变化丰富", "en": "Varied"},
            "5": {"zh": "每条都各具特色", "en": "Each one distinct"},
        },
    },
]

PAIR_METRIC_SLUGS = [m["slug"] for m in METRICS if not m.get("for_diversity")]


def metrics_ensure(metric_model) -> int:
    """Create whichever of the metrics are missing; never overwrite staff's wording.
    Takes the model so that migrations can pass their historical one."""
    created = 0
    for position, definition in enumerate(METRICS, start=1):
        fields = {k: v for k, v in definition.items() if k != "slug"}
        _metric, new = metric_model.objects.get_or_create(
            slug=definition["slug"], defaults={**fields, "position": position}
        )
        created += new
    return created
