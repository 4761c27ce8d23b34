"""A ready-to-paste methods paragraph for a study, in Chinese and English.

Every number in it comes from the study's stored results document (the one the results
page shows) and from the same judgment counts the export manifest gives, so the text
and the figures cannot drift apart. The template is versioned: a paper can cite which
wording produced its methods section.
"""

from dataclasses import dataclass

from .exports.snapshot import judgment_counts
from .models import Judgment, StudyResults

# Changes whenever the wording changes, so that a pasted paragraph can be traced to it
# (2: the bootstraps' limitation is stated; 3: alpha and Bradley-Terry intervals are
# two-way clustered, the draws only screen for near separation).
METHODS_VERSION = "chatanime-methods/3"
LANGUAGES = ("zh", "en")


@dataclass(frozen=True)
class MethodsFacts:
    """What the paragraph states, gathered once for both languages."""

    reference: str
    compared: list
    characters: int
    scenarios: int
    rounds: list
    overlap: int
    design: str
    diversity: bool
    counted: int
    excluded: int
    gold: int
    annotators: int
    draws: int
    seed: int
    confidence: float
    min_judgments: int
    min_annotators: int
    revision: str
    computed_at: str
    not_estimable: list


def methods_facts(study, results: StudyResults) -> MethodsFacts:
    payload = results.payload
    statistics = payload.get("statistics", {})
    counts = judgment_counts(study)
    software = payload.get("software") or {}
    scenarios = study.scenarios.count() or len(
        set(Judgment.objects.filter(item__study=study).values_list("item__scenario_id", flat=True))
        - {None}
    )
    return MethodsFacts(
        reference=study.reference_source.display_name or study.reference_source.slug,
        compared=sorted(s.display_name or s.slug for s in study.compared_sources.all()),
        characters=study.characters.count(),
        scenarios=scenarios,
        rounds=sorted(study.rounds),
        overlap=study.overlap,
        design=study.design,
        diversity=study.include_diversity,
        counted=payload.get("judgments", 0),
        excluded=counts["excluded"],
        gold=counts["gold"],
        annotators=sum(1 for a in payload.get("annotators", {}).values() if a.get("judgments")),
        draws=statistics.get("bootstrap_draws", 0),
        seed=statistics.get("seed", 0),
        confidence=statistics.get("confidence", 0.95),
        min_judgments=statistics.get("min_judgments", 0),
        min_annotators=statistics.get("min_annotators", 0),
        revision=" ".join(
            str(part) for part in (software.get("version"), software.get("revision")) if part
        )
        or "unknown",
        computed_at=results.computed_at.strftime("%Y-%m-%d %H:%M UTC"),
        not_estimable=sorted(
            slug for slug, b in payload.get("bradley_terry", {}).items() if b.get("status") != "ok"
        ),
    )


def methods_text(facts: MethodsFacts, language: str = "en") -> str:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    return _ZH(facts) if language == "zh" else _EN(facts)


def _percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def _EN(f: MethodsFacts) -> str:
    pairing = (
        f"each compared source was paired with the reference source ({f.reference})"
        if f.design == "reference"
        else "every pair of sources was compared"
    )
    rounds = " and ".join(str(r) for r in f.rounds)
    diversity = (
        " Annotators also rated the response diversity of blinded sets of one source's answers."
        if f.diversity
        else ""
    )
    separation = (
        f" Bradley-Terry strengths were not estimable for {', '.join(f.not_estimable)} "
        "(complete or near separation) and are not reported."
        if f.not_estimable
        else ""
    )
    return (
        f"Design. Answers of {len(f.compared)} compared source(s) ({', '.join(f.compared)}) "
        f"were evaluated against {f.reference} for {f.characters} character(s) and "
        f"{f.scenarios} scenario(s), dialogue round(s) {rounds}; {pairing}. Pairs were shown "
        "blinded, with the left/right order randomised per annotator and item, and each item "
        f"was judged by {f.overlap} screened annotator(s) on nine 5-point metrics (fluency, "
        "coherency, consistency; character knowledge, speech style, behavioral habit; demand "
        f"matching, experience sharing, emotional value) and an overall preference.{diversity}\n"
        f"Counts and exclusions. The analysis uses {f.counted} judgment(s) by {f.annotators} "
        f"annotator(s). {f.excluded} judgment(s) were excluded by study staff and "
        f"{f.gold} judgment(s) of gold (attention-check) items were used only to check "
        "annotators; neither enters any figure.\n"
        "Statistics. Leaderboards report the mean rating per source and metric; paired "
        "differences are the compared minus the reference answer's rating within the same "
        "judgment. Agreement is Krippendorff's alpha (ordinal) and ICC(1,k) over answers "
        "within items. Preferences are win/tie/loss counts against the reference and "
        "Bradley-Terry log-strengths (ties count half to each side)."
        f"{separation}\n"
        f"Intervals. All intervals are {_percent(f.confidence)} intervals. Means and paired "
        "differences use two-way cluster-robust standard errors (Cameron, Gelbach and Miller "
        "2011) clustered by character x scenario cell and by annotator, with Student's t on "
        "min(cells, annotators) - 1 degrees of freedom; proportions use Wilson intervals on "
        "the design-effect-adjusted sample size. Alpha and Bradley-Terry strengths use the "
        "same two-way variance (cell + annotator - cell x annotator terms) and t "
        "quantiles: for alpha each term is a delete-one-cluster jackknife variance (leaving "
        "out one cell, one annotator, or one annotator's ratings in one cell), for "
        "Bradley-Terry a cluster-robust sandwich variance. A Bradley-Terry strength gets no "
        "interval (near separation) when its source won or lost every comparison in more "
        f"than {_percent((1 - f.confidence) / 2)} of {f.draws} bootstrap resamples of cells "
        f"(seed {f.seed}). No interval "
        f"is given for an estimate based on fewer than {f.min_judgments} judgments or "
        f"{f.min_annotators} annotators.\n"
        f"Software. ChatAnime evaluation platform {f.revision}; results computed "
        f"{f.computed_at}; methods text {METHODS_VERSION}."
    )


def _ZH(f: MethodsFacts) -> str:
    pairing = (
        f"每个被比较来源均与参照来源（{f.reference}）配对"
        if f.design == "reference"
        else "所有来源两两配对"
    )
    rounds = "、".join(str(r) for r in f.rounds)
    diversity = "标注者还对同一来源回答组成的匿名集合评定了回复多样性。" if f.diversity else ""
    separation = (
        f"{'、'.join(f.not_estimable)} 的 Bradley-Terry 强度因完全或近似分离而不可估计，未予报告。"
        if f.not_estimable
        else ""
    )
    return (
        f"设计：以 {f.reference} 为参照，评估 {len(f.compared)} 个被比较来源"
        f"（{'、'.join(f.compared)}）在 {f.characters} 个角色、{f.scenarios} 个场景、"
        f"第 {rounds} 轮对话中的回答；{pairing}。答案对以匿名方式呈现，左右顺序按标注者和条目随机，"
        f"每个条目由 {f.overlap} 名经过筛选的标注者在九项五点量表指标（流畅性、连贯性、一致性；"
        "角色知识、说话风格、行为习惯；需求匹配、经验分享、情感价值）上评分并给出总体偏好。"
        f"{diversity}\n"
        f"数量与排除：分析使用 {f.annotators} 名标注者的 {f.counted} 条评判。"
        f"研究人员排除了 {f.excluded} 条评判；金标准（注意力检查）条目的 {f.gold} 条评判仅用于检查标注者。"
        "二者均不计入任何结果。\n"
        "统计：排行榜报告每个来源在每项指标上的平均分；配对差值为同一评判中被比较答案与参照答案的评分之差。"
        "一致性采用 Krippendorff's alpha（顺序）和 ICC(1,k)，以条目内的答案为单位。"
        "偏好报告相对参照的胜/平/负次数及 Bradley-Terry 对数强度（平局各计一半）。"
        f"{separation}\n"
        f"区间：所有区间均为 {_percent(f.confidence)} 区间。均值和配对差值采用按角色×场景单元和标注者"
        "双向聚类的稳健标准误（Cameron、Gelbach 和 Miller，2011），t 分布自由度为 min(单元数, 标注者数) - 1；"
        "比例采用基于设计效应调整样本量的 Wilson 区间。alpha 和 Bradley-Terry 强度采用同样的双向方差"
        "（单元项 + 标注者项 - 单元×标注者项）和 t 分位数：alpha 的各项为逐一删除聚类（一个单元、一名标注者"
        "或一名标注者在一个单元内的评分）的刀切法方差，Bradley-Terry 的各项为聚类稳健三明治方差。"
        f"若某来源在 {f.draws} 次按单元重抽样的自助样本（种子 {f.seed}）中超过 "
        f"{_percent((1 - f.confidence) / 2)} 全胜或全负（近似分离），其强度不给出区间。"
        f"少于 {f.min_judgments} 条评判或"
        f"{f.min_annotators} 名标注者的估计不给出区间。\n"
        f"软件：ChatAnime 评测平台 {f.revision}；结果计算于 {f.computed_at}；"
        f"方法文本版本 {METHODS_VERSION}。"
    )
