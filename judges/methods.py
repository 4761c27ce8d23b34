"""A methods paragraph for a judge run, in Chinese and English, from its stored report:
every number in it is one the results page shows. Versioned with the judge prompt."""

from .prompts import PROMPT_VERSION

LANGUAGES = ("zh", "en")
# methods/2: alpha's unit is an answer within its pair (as the study's agreement), not the
# answer alone; tied values share their mean rank in the rank correlation. methods/3: no
# interval for a rank correlation of fewer than five sources, or whose bound falls on it.
JUDGE_METHODS_VERSION = f"{PROMPT_VERSION}+methods/3"


def _orders(report: dict, language: str) -> str:
    if language == "zh":
        return "每对回答评两次，第二次左右互换" if report["both_orders"] else "每对回答评一次"
    return (
        "each pair twice, the sides swapped the second time"
        if report["both_orders"]
        else "each pair once"
    )


def judge_methods_text(report: dict, language: str = "en") -> str:
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    figures = report["figures"]
    calls = report["calls"]
    output = (
        {True: "JSON schema", False: "plain JSON", None: "plain JSON"}
        if language == "en"
        else {True: "JSON 模式", False: "纯 JSON", None: "纯 JSON"}
    )[report["structured_output"]]
    if language == "zh":
        return (
            f"我们让 {report['model']}（温度 {report['temperature']:g}）担任评审，用与人类评分者"
            f"相同的{'中文' if report['language'] == 'zh' else '英文'}评分标准（九项指标的定义与 1–5 分锚点，"
            f"提示版本 {report['prompt_version']}，标准摘要 {report['rubric_version']}）给研究 "
            f"{report['study']} 的盲评回答对打分，左右顺序沿用评分者的平衡安排，{_orders(report, 'zh')}；"
            f"回复以{output}读取并严格校验，无效回复重试后记为失败，不计为评分。共 {calls['rated']} 次有效评判，"
            f"{calls['failed']} 次失败；对照 {figures['human_judgments']} 条计入的人类评判。评审的评分从不计入"
            "人类结果。一致性用有序 Krippendorff's alpha（人类，及加入评审作为额外评分者），区间为结果所用的"
            "双向聚类区间；比例（位置、长度、自家偏好）用按单元聚类的 Wilson 区间；斜率与均值差用聚类稳健 t 区间；"
            "相关、差值与等级相关用按单元重抽样的 bootstrap 百分位区间；来源少于五个、或区间端点落在估计值上时，"
            "等级相关取值太少，百分位会塌缩到这些取值上，故不给区间。方法版本 "
            f"{JUDGE_METHODS_VERSION}。"
        )
    return (
        f"{report['model']} (temperature {report['temperature']:g}) rated the blinded answer pairs "
        f"of study {report['study']} with the annotators' own rubric in "
        f"{'Chinese' if report['language'] == 'zh' else 'English'} (the nine metric definitions "
        f"and their 1-5 anchors; prompt {report['prompt_version']}, rubric digest "
        f"{report['rubric_version']}), sides following the annotators' balanced schedule, "
        f"{_orders(report, 'en')}. Replies were read as {output} and checked strictly; an "
        "invalid reply was asked again and then recorded as a failure, never as a rating. "
        f"{calls['rated']} verdicts were obtained and {calls['failed']} calls failed; they are "
        f"compared with {figures['human_judgments']} counted human judgments and never counted "
        "among them. Agreement is Krippendorff's ordinal alpha of the humans and with the judge "
        "as one more rater, with the results' two-way clustered interval; proportions "
        "(position, length, own-family preference) have Wilson intervals clustered by cell; "
        "slopes and mean differences cluster-robust t intervals; correlations, differences of "
        "shares and the rank correlation cell-bootstrap percentile intervals, except a rank "
        "correlation of fewer than five sources or with a bound on the estimate: it takes too "
        "few values, and the percentiles collapse onto them. Methods version "
        f"{JUDGE_METHODS_VERSION}."
    )
