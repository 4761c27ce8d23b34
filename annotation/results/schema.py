"""The results document: what the workers store in `StudyResults.payload` and what the
page, the API, the staff pages and `reproduce` read. Typed here once, versioned, and read
through `read_document` (or `read_annotators` for the annotators' part alone), which
refuses a document it does not know how to read instead of letting each reader guess.

Version history:
- 0: documents written before the version was recorded. Same families as version 1,
  though the oldest lack some (`statistics`, per-round and per-character intervals);
  they are read with the missing families empty.
- 1: `schema_version` recorded; the families below.
- 2: `bradley_terry_note` says why there are no strengths ("restates_win_rates" when
  every comparison was with the reference, "no_comparisons"; "" when there are), and
  each strength carries its comparisons, annotators and `enough_data` (the minimum
  information rule); agreement rows carry an interval for ICC (`icc_ci_low`,
  `icc_ci_high`). Version 1 documents are read with an empty note.
- 3: `style_adjusted_differences`: the paired differences adjusted for the answers'
  length and emoji/kaomoji (`annotation.stats.style`). Older documents are read with it
  empty.

Pure: no Django, so that `annotation.stats` could produce it and anything can read it.
"""

from typing import Any, NotRequired, TypedDict

SCHEMA_VERSION = 3


class ResultsSchemaError(ValueError):
    """A stored results document this software cannot read (recompute the study)."""


class Estimate(TypedDict):
    """A mean with its interval; no interval (`enough_data` false) below the minimum."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    annotators: int
    cells: int
    enough_data: bool


class AgreementFigures(TypedDict):
    alpha_ordinal: float | None
    alpha_interval: float | None
    ci_low: float | None
    ci_high: float | None
    icc_1k: float | None
    icc_ci_low: NotRequired[float | None]  # from version 2; study-wide only
    icc_ci_high: NotRequired[float | None]
    within_one: float | None
    n_items: int
    enough_data: NotRequired[bool]  # only where an interval was asked for


class ProportionInterval(TypedDict):
    design_effect: float | None
    annotators: int
    enough_data: bool


class PreferenceFigures(ProportionInterval):
    wins: int
    ties: int
    losses: int
    n: int
    win_rate: float | None
    win_low: float | None
    win_high: float | None
    tie_rate: float | None
    loss_rate: float | None


class StrengthFigures(TypedDict):
    log_strength: float | None  # None for a separated source
    ci_low: float | None
    ci_high: float | None
    estimable: bool
    status: str  # ok, separated, near_separation
    n: NotRequired[int]  # comparisons it took part in (from version 2)
    annotators: NotRequired[int]
    enough_data: NotRequired[bool]


class HumanGuessFigures(ProportionInterval):
    passed_for_human: int
    asked: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None


class PositionBiasFigures(ProportionInterval):
    left: int
    right: int
    n: int
    left_rate: float | None
    ci_low: float | None
    ci_high: float | None


class AnnotatorFigures(TypedDict):
    judgments: int
    excluded: int
    mean_distance: float | None
    units_compared: int
    gold_passed: int
    gold_checked: int
    open_flags: int
    median_seconds: float | None


class MetricDescription(TypedDict):
    slug: str
    label_zh: str
    label_en: str
    dimension: str


class SourceDescription(TypedDict):
    display_name: str
    kind: str


class StyleAdjusted(TypedDict):
    """A paired difference at equal length and decoration (the intercept of the
    differences on the style differences), with the slopes it was adjusted by."""

    adjusted: float | None
    ci_low: float | None
    ci_high: float | None
    per_100_characters: float | None
    per_decoration: float | None
    mean_length_difference: float | None  # characters, compared - reference
    n: int
    annotators: int
    enough_data: bool


# Keyed by source slug, then metric slug or `dimension:<dimension>`.
Leaderboard = dict[str, dict[str, Estimate]]
Agreement = dict[str, AgreementFigures]  # by metric slug


class ResultsDocument(TypedDict):
    schema_version: int
    study: str
    judgments: int
    statistics: dict[str, Any]  # the interval rules (`stats.rules.Rules.describe`)
    metrics: list[MetricDescription]
    sources: dict[str, SourceDescription]
    agreement: Agreement
    agreement_by_round: dict[str, Agreement]  # "1", "2"
    agreement_by_character: dict[str, Agreement]  # character id
    leaderboard: Leaderboard
    leaderboard_by_round: dict[str, Leaderboard]
    leaderboard_by_character: dict[str, Leaderboard]
    diversity: dict[str, Estimate]
    paired_differences: Leaderboard
    style_adjusted_differences: dict[str, dict[str, StyleAdjusted]]  # from version 3
    preferences: dict[str, PreferenceFigures]
    bradley_terry: dict[str, StrengthFigures]
    bradley_terry_note: str  # why `bradley_terry` is empty, "" when it is not
    human_guess: dict[str, HumanGuessFigures]
    position_bias: dict[str, PositionBiasFigures]  # "overall" and per pseudonym
    annotators: dict[str, AnnotatorFigures]  # by pseudonym
    software: dict[str, Any]
    seconds: float


# What a family holds when an older document lacks it.
_EMPTY: dict[str, Any] = {
    "study": "",
    "judgments": 0,
    "statistics": {},
    "metrics": [],
    "software": {},
    "seconds": 0.0,
    "bradley_terry_note": "",
}
_FAMILIES = [name for name in ResultsDocument.__annotations__ if name != "schema_version"]
_SHAPE: dict[str, tuple[type, ...]] = {name: (dict,) for name in _FAMILIES} | {
    "study": (str,),
    "bradley_terry_note": (str,),
    "judgments": (int,),
    "metrics": (list,),
    "seconds": (int, float),
}


def document_version(payload: Any) -> int:
    """The schema version a stored document declares (0 when it declares none)."""
    if not isinstance(payload, dict):
        raise ResultsSchemaError("a results document is a JSON object")
    version = payload.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise ResultsSchemaError(f"results document has an invalid schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ResultsSchemaError(
            f"results document schema version {version} is newer than this software reads "
            f"(up to {SCHEMA_VERSION}); recompute the study's results or upgrade"
        )
    return version


def read_document(payload: Any) -> ResultsDocument:
    """A stored document as a ResultsDocument: every family present (empty when an older
    document lacks it). Raises ResultsSchemaError for anything else."""
    version = document_version(payload)
    document = {name: payload.get(name, _EMPTY.get(name, {})) for name in _FAMILIES}
    for name, shape in _SHAPE.items():
        if not isinstance(document[name], shape):
            raise ResultsSchemaError(
                f"results document's {name!r} is not a {' or '.join(t.__name__ for t in shape)}"
            )
    return ResultsDocument(schema_version=version, **document)  # type: ignore[typeddict-item]


def read_annotators(version: Any, annotators: Any) -> dict[str, AnnotatorFigures]:
    """The annotators' part of a stored document, read without the rest (the staff pages
    read it from every study): `version` is the document's `schema_version`, or None."""
    document_version({} if version is None else {"schema_version": version})
    if annotators is None:
        return {}
    if not isinstance(annotators, dict):
        raise ResultsSchemaError("results document's 'annotators' is not a dict")
    return annotators
