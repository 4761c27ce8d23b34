"""A ready-to-paste methods paragraph for a study, in Chinese and English.

Every number in it comes from the study's stored results document (the one the results
page shows) and from the same judgment counts the export manifest gives, so the text
and the figures cannot drift apart. The template is versioned: a paper can cite which
wording produced its methods section.
"""

from dataclasses import dataclass, replace

from dialogues.selectors import HUMAN_FANS

from .exports.snapshot import judgment_counts
from .models import Judgment, StudyResults
from .stats.rules import METHODS_VERSION

__all__ = ["METHODS_VERSION", "MethodsFacts", "methods_facts", "methods_text"]
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
    separated: list  # Bradley-Terry: no finite strength, no number published
    near_separation: list  # a point, no interval
    strengths_note: str  # `bradley_terry_note`: why there are no strengths


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
        separated=sorted(
            slug
            for slug, b in payload.get("bradley_terry", {}).items()
            if b.get("status") == "separated"
        ),
        near_separation=sorted(
            slug
            for slug, b in payload.get("bradley_terry", {}).items()
            if b.get("status") == "near_separation"
        ),
        strengths_note=payload.get("bradley_terry_note", ""),
    )


def methods_text(facts: MethodsFacts, language: str = "en") -> str:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    return _ZH(facts) if language == "zh" else _EN(facts)


def _percent(confidence: float) -> str:
    return f"{confidence * 100:g}%"


def _bonferroni(confidence: float) -> str:
    """Per-metric confidence for familywise `confidence` over the nine metrics."""
    return f"{(1 - (1 - confidence) / 9) * 100:.1f}%"


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
    if f.strengths_note == "restates_win_rates":
        strengths = (
            ". Bradley-Terry strengths are not reported: every source was compared with the "
            "reference only, so they would restate the win rates"
        )
    else:
        strengths = (
            " and Bradley-Terry log-strengths over all compared pairs (ties count half to "
            "each side)"
        )
    if f.separated:
        strengths += (
            f". Bradley-Terry strengths of {', '.join(f.separated)} are not reported (the "
            "source won or lost every comparison: no finite estimate)"
        )
    if f.near_separation:
        strengths += (
            f"; {', '.join(f.near_separation)} have a point estimate without an interval "
            "(near separation)"
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
        "judgment; beside them, the same differences adjusted for style: the intercept of "
        "a least-squares fit of the paired differences on the two answers' difference in "
        "length (characters) and in emoji and kaomoji count, i.e. the difference expected "
        "between two answers of equal length and decoration (its interval: two-way "
        "cluster-robust by cell and annotator on each pair's influence on the intercept, "
        "each one-way term CR2, t as for means). "
        "Agreement is Krippendorff's alpha (ordinal) and ICC(1,k) over answers "
        "within items (with annotators assigned to items at random, ICC(1,k) estimates the "
        "same agreement of the mean of k ratings as the two-way random-effects ICC(A,k)); "
        "agreement per round and per character is given as point figures, without "
        "intervals (for every round and character they would cost each recompute several "
        "times the study's own agreement intervals). "
        f"Preferences are win/tie/loss counts against the reference{strengths}.\n"
        f"Intervals. Every interval is a {_percent(f.confidence)} interval for its own "
        "figure. Means, paired differences and the design effects of proportions use "
        "two-way cluster-robust variances (Cameron, Gelbach and Miller 2011) clustered by "
        "character x scenario cell and by annotator: the cell term plus the annotator term "
        "minus the cell x annotator term, each a CR2 one-way variance (Bell and McCaffrey "
        "2002), with Student's t on the effective number of cells or of annotators, "
        "whichever is smaller, minus one degrees of freedom. The effective number weighs "
        "each cluster by its expected share of the variance, fitted to its size and "
        "contribution (a Satterthwaite count), so that a few annotators who did most of "
        "the work count as few. Proportions (win rates, passed-for-human, position bias) "
        "use Wilson intervals on the sample size divided by the design effect with the t "
        "quantile in place of z (Korn and Graubard 1998); at a proportion of 0 or 1 the "
        "effective sample size is the effective number of clusters. Alpha, ICC and "
        "Bradley-Terry strengths use the same two-way combination: for alpha and ICC each "
        "term is a delete-one-cluster jackknife variance (leaving out one cell, one "
        "annotator, or one annotator's ratings in one cell), for Bradley-Terry a "
        "cluster-robust sandwich variance. Bradley-Terry uses the t quantiles above. For "
        "alpha and ICC each cluster's squared change is weighted by one minus its share "
        "of the ratings (CR2 for a mean), and because the annotator and cell x annotator "
        "terms nearly cancel, the interval is the generalized (fiducial) interval of the "
        "combination (Weerahandi 1993): each term is taken as uncertain as a chi-square "
        "on its effective number of clusters minus one degrees of freedom (with a single "
        "term this is Student's t). Each left-out ICC is the single-rating ICC(1) of the "
        "ratings left, stepped up to the study's number of ratings per unit "
        "(Spearman-Brown), so that leaving an annotator out changes the sample and not "
        "the number of ratings the ICC describes. A Bradley-Terry strength gets no "
        "interval (near separation) when its source won or lost every comparison in more "
        f"than {_percent((1 - f.confidence) / 2)} of {f.draws} bootstrap resamples of cells "
        f"(seed {f.seed}). No interval is given for an estimate based on fewer than "
        f"{f.min_judgments} judgments or {f.min_annotators} annotators (for a "
        "Bradley-Terry strength: comparisons of its source), nor where the work is so "
        "concentrated that the effective number of annotators or cells is below two (the "
        "t would have under one degree of freedom); such figures are marked as not having "
        "enough data.\n"
        "Multiplicity. Intervals are not adjusted for the nine metrics reported per source "
        "or for the number of sources: each covers its own figure with the stated "
        "confidence. A claim about all nine metrics of a source at once with "
        f"{_percent(f.confidence)} familywise confidence needs intervals at "
        f"{_bonferroni(f.confidence)} per metric (Bonferroni).\n"
        f"Software. ChatAnime evaluation platform {f.revision}; results computed "
        f"{f.computed_at}; methods text {METHODS_VERSION}."
    )


def _zh_source(name: str) -> str:
    return "人类粉丝" if name == HUMAN_FANS else name


def _ZH(f: MethodsFacts) -> str:
    # The human fans' source keeps the platform's English name as data; named in Chinese.
    f = replace(f, reference=_zh_source(f.reference), compared=[_zh_source(c) for c in f.compared])
    pairing = (
        f"每个被比较来源均与参照来源（{f.reference}）配对"
        if f.design == "reference"
        else "所有来源两两配对"
    )
    rounds = "、".join(str(r) for r in f.rounds)
    diversity = "标注者还对同一来源回答组成的匿名集合评定了回复多样性。" if f.diversity else ""
    if f.strengths_note == "restates_win_rates":
        strengths = "。未报告 Bradley-Terry 强度：每个来源都只与参照来源比较，强度只会重述胜率"
    else:
        strengths = "，以及所有比较对上的 Bradley-Terry 对数强度（平局各计一半）"
    if f.separated:
        strengths += (
            f"。{'、'.join(f.separated)} 的 Bradley-Terry 强度未予报告"
            "（该来源在所有比较中全胜或全负，不存在有限估计）"
        )
    if f.near_separation:
        strengths += f"；{'、'.join(f.near_separation)} 只给出点估计、不给区间（近似分离）"
    return (
        f"设计：以 {f.reference} 为参照，评估 {len(f.compared)} 个被比较来源"
        f"（{'、'.join(f.compared)}）在 {f.characters} 个角色、{f.scenarios} 个场景、"
        f"第 {rounds} 轮对话中的回答；{pairing}。答案对以匿名方式呈现，左右顺序按标注者和条目随机，"
        f"每个条目由 {f.overlap} 名经过筛选的标注者在九项五点量表指标（流畅性、连贯性、一致性；"
        "角色知识、语言风格、行为习惯；需求匹配、经验分享、情感价值）上评分并给出总体偏好。"
        f"{diversity}\n"
        f"数量与排除：分析使用 {f.annotators} 名标注者的 {f.counted} 条评判。"
        f"研究人员排除了 {f.excluded} 条评判；金标准（注意力检查）条目的 {f.gold} 条评判仅用于检查标注者。"
        "二者均不计入任何结果。\n"
        "统计：排行榜报告每个来源在每项指标上的平均分；配对差值为同一评判中被比较答案与参照答案的评分之差；"
        "并列给出经风格调整的配对差值：将配对差值对两个回答的长度（字数）之差和表情/颜文字数量之差做最小二乘拟合所得的截距，"
        "即两个长度与装饰相同的回答之间的预期差异（其区间按单元和标注者双向聚类，基于每对评分对截距的影响，"
        "各单向项为 CR2，t 分位数同均值）。"
        "一致性采用 Krippendorff's alpha（顺序）和 ICC(1,k)，以条目内的答案为单位"
        "（标注者随机分配到条目时，ICC(1,k) 与双向随机效应 ICC(A,k) 估计的是同一个 k 个评分均值的一致性）；"
        "每一轮和每个角色的一致性只给出点估计，不给出区间（为每一轮和每个角色计算区间，"
        "每次重算的开销将是整个研究一致性区间的数倍）。"
        f"偏好报告相对参照的胜/平/负次数{strengths}。\n"
        f"区间：每个区间都是针对其自身数值的 {_percent(f.confidence)} 区间。均值、配对差值和比例的设计效应"
        "采用按角色×场景单元和标注者双向聚类的稳健方差（Cameron、Gelbach 和 Miller，2011）："
        "单元项加标注者项减单元×标注者项，每项为 CR2 单向方差（Bell 和 McCaffrey，2002），"
        "t 分布自由度为单元与标注者有效数中较小者减一。有效数按各聚类对方差的预期贡献加权"
        "（由聚类规模和实际贡献拟合，即 Satterthwaite 计数），少数标注者完成大部分工作时只算作少数。"
        "比例（胜率、被认作人类的比例、位置偏差）采用基于设计效应调整样本量的 Wilson 区间，并以 t 分位数代替 z"
        "（Korn 和 Graubard，1998）；比例为 0 或 1 时，有效样本量取聚类的有效数。"
        "alpha、ICC 和 Bradley-Terry 强度采用同样的双向组合：alpha 和 ICC 的各项为逐一删除聚类"
        "（一个单元、一名标注者或一名标注者在一个单元内的评分）的刀切法方差，Bradley-Terry 的各项为聚类稳健三明治方差。"
        "Bradley-Terry 采用上述 t 分位数。alpha 和 ICC 的每个聚类的平方变化以一减其评分占比加权（对均值即 CR2）；"
        "由于标注者项与单元×标注者项几乎相互抵消，区间取该组合的广义（信任）置信区间（Weerahandi，1993）："
        "每项的不确定性按自由度为其有效聚类数减一的卡方分布计（只有一项时即 Student t）。"
        "每个删除聚类后的 ICC 取剩余评分的单次评分 ICC(1)，再按 Spearman-Brown 公式换算到本研究每个单元的评分数，"
        "使删除一名标注者只改变样本，而不改变 ICC 所描述的评分数。"
        f"若某来源在 {f.draws} 次按单元重抽样的自助样本（种子 {f.seed}）中超过 "
        f"{_percent((1 - f.confidence) / 2)} 全胜或全负（近似分离），其强度不给出区间。"
        f"少于 {f.min_judgments} 条评判或 {f.min_annotators} 名标注者的估计不给出区间"
        "（Bradley-Terry 强度按其来源参与的比较计）；工作过于集中、有效标注者数或有效单元数不足二"
        "（t 分布自由度不足一）的估计同样不给出区间。这些数值均标为数据不足。\n"
        "多重比较：区间未针对每个来源报告的九项指标或来源数量进行调整，每个区间只以所述置信度覆盖其自身数值。"
        f"若要以 {_percent(f.confidence)} 的族系置信度同时断言某来源的全部九项指标，"
        f"每项指标需使用 {_bonferroni(f.confidence)} 区间（Bonferroni）。\n"
        f"软件：ChatAnime 评测平台 {f.revision}；结果计算于 {f.computed_at}；"
        f"方法文本版本 {METHODS_VERSION}。"
    )
