"""What the judge figures are computed from: parallel integer and float arrays, one
element per verdict or per rating, for the judge and for the humans alike. Built from the
database by `judges.selectors.report` and from a snapshot's files alike; no Django here."""

from dataclasses import dataclass, field

import numpy as np

LEFT, RIGHT, TIE = 0, 1, -1


@dataclass
class Verdicts:
    """One element per verdict on a pair: a judge call or a human judgment. `rater` is
    the annotator (0 for the judge); `order` 1 or 2 (the judge's swapped order; always 1
    for a human); `preferred` LEFT, RIGHT or TIE; scores are the mean over the metrics
    of each side's ratings (NaN without ratings)."""

    item: np.ndarray
    cell: np.ndarray
    rater: np.ndarray
    order: np.ndarray
    left_source: np.ndarray
    right_source: np.ndarray
    left_length: np.ndarray
    right_length: np.ndarray
    preferred: np.ndarray
    left_score: np.ndarray
    right_score: np.ndarray

    def __len__(self) -> int:
        return len(self.item)

    def where(self, mask) -> "Verdicts":
        return Verdicts(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})

    @classmethod
    def from_rows(cls, rows) -> "Verdicts":
        """From tuples in the fields' order."""
        names = list(cls.__dataclass_fields__)
        table = list(zip(*rows, strict=True)) if rows else [()] * len(names)
        floats = {"left_score", "right_score"}
        return cls(
            **{
                name: np.array(column, dtype=float if name in floats else np.int64)
                for name, column in zip(names, table, strict=True)
            }
        )


@dataclass
class Scores:
    """One element per rating of one answer on one metric."""

    answer: np.ndarray
    item: np.ndarray
    cell: np.ndarray
    rater: np.ndarray
    order: np.ndarray
    source: np.ndarray
    metric: np.ndarray
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.answer)

    def where(self, mask) -> "Scores":
        return Scores(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})

    @classmethod
    def from_rows(cls, rows) -> "Scores":
        names = list(cls.__dataclass_fields__)
        table = list(zip(*rows, strict=True)) if rows else [()] * len(names)
        return cls(
            **{
                name: np.array(column, dtype=np.int64)
                for name, column in zip(names, table, strict=True)
            }
        )


@dataclass
class JudgeInputs:
    judge_verdicts: Verdicts
    judge_scores: Scores
    human_verdicts: Verdicts
    human_scores: Scores
    metrics: dict[int, str]  # metric id -> slug, in the rating form's order
    sources: dict[int, str]  # source id -> slug
    reference: int | None  # the reference source of the study
    self_source: int | None  # the source of the judge's own model family
    # answer id -> (length in characters, emoji and kaomoji): the style the comparisons
    # control for.
    answer_styles: dict[int, tuple[int, int]] = field(default_factory=dict)
