"""Export rows generated in Python from a streaming query: every rating, unblinded.

Rows are generated lazily, so memory stays flat whatever the size of the study. Text
that a spreadsheet would run as a formula is neutralised. On PostgreSQL the long CSV
comes from COPY instead (`postgres.py`), byte for byte the same: any change to a value's
format here must be made there too.
"""

import csv
import json
from collections.abc import Iterator
from datetime import UTC

from ..models import Metric, Rating, is_counted
from ..models.common import FORMULA_STARTS
from ..stats.arrays import seconds_value

LONG_COLUMNS = [
    "study",
    "item",
    "judgment",
    "annotator",
    "character",
    "scenario",
    "round",
    "source",
    "source_kind",
    "position",
    "metric",
    "value",
    "preference",
    "seconds_on_task",
    "submitted_at",
    "human_guess",
    "comment",
    "simulated",
    # What decides whether the results count a judgment (`counted` = not excluded and not
    # gold), the ids the results document keys its figures on, and what quality control
    # said about the judgment: enough to rebuild every figure from the file alone.
    "excluded",
    "is_gold",
    "counted",
    "answer",
    "character_id",
    "scenario_id",
    "served_at",
    "gold_passed",
    "open_flags",
]
# The wide CSV's columns that describe the judgment rather than one rating: what comes
# before the ratings, and what comes after them.
JUDGMENT_HEAD = ["study", "item", "judgment", "annotator", "character", "scenario", "round"]
JUDGMENT_TAIL = [
    "preference",
    "seconds_on_task",
    "submitted_at",
    "human_guess",
    "comment",
    "simulated",
    "excluded",
    "is_gold",
    "counted",
    "character_id",
    "scenario_id",
    "served_at",
    "gold_passed",
    "open_flags",
]
CHUNK = 5000


def neutralise(value):
    """A cell that starts like a formula is prefixed with an apostrophe (OWASP CSV
    injection advice); numbers are left alone."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def timestamp_text(moment) -> str:
    """ISO 8601 in UTC with microseconds, always the same width."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def long_columns(include_excluded: bool = False) -> list[str]:
    """The same columns either way: `excluded` is always there, and only true in an
    export that asked for excluded judgments."""
    return list(LONG_COLUMNS)


def open_flags_by_judgment(study=None) -> dict[int, str]:
    """The kinds of a judgment's unresolved quality flags, sorted, joined by `;`."""
    from ..models import QualityFlag

    flags = QualityFlag.objects.filter(judgment__isnull=False, resolved_at__isnull=True)
    if study is not None:
        flags = flags.filter(judgment__item__study=study)
    kinds = {}
    for judgment, kind in flags.values_list("judgment_id", "kind"):
        kinds.setdefault(judgment, []).append(kind)
    return {judgment: ";".join(sorted(names)) for judgment, names in kinds.items()}


def _ratings(study=None, include_excluded=False):
    ratings = Rating.objects.all()
    if study is not None:
        ratings = ratings.filter(judgment__item__study=study)
    if not include_excluded:
        ratings = ratings.filter(judgment__excluded=False)
    return ratings.order_by("judgment_id", "answer_id", "metric__position", "pk").values_list(
        "judgment__item__study__slug",
        "judgment__item_id",
        "judgment_id",
        "judgment__annotator__annotator_profile__pseudonym",
        "judgment__item__character__key",
        "judgment__item__scenario__number",
        "judgment__item__round",
        "answer__source__slug",
        "answer__source__kind",
        "answer__source_id",
        "judgment__assignment__left_source_id",
        "metric__slug",
        "value",
        "judgment__preferred_answer__source__slug",
        "judgment__is_tie",
        "judgment__item__kind",
        "judgment__seconds_on_task",
        "judgment__submitted_at",
        "judgment__human_guess__source__slug",
        "judgment__human_guess_asked",
        "judgment__comment",
        "judgment__simulated",
        "judgment__excluded",
        "judgment__item__is_gold",
        "answer_id",
        "judgment__item__character_id",
        "judgment__item__scenario_id",
        "judgment__assignment__served_at",
        "judgment__gold_check__passed",
        "judgment__item__diversity_source__slug",
        "judgment__item__diversity_source__kind",
    )


def long_rows(study=None, include_excluded=False) -> Iterator[dict]:
    """One row per rating. A diversity rating belongs to its set: source and kind come
    of the set (`Item.diversity_source`), position is `set`."""
    open_flags = open_flags_by_judgment(study)
    for (
        study_slug,
        item,
        judgment,
        annotator,
        character,
        scenario,
        round_,
        source,
        kind,
        source_id,
        left_source,
        metric,
        value,
        preferred,
        is_tie,
        item_kind,
        seconds,
        submitted,
        guess,
        guess_asked,
        comment,
        simulated,
        excluded,
        is_gold,
        answer,
        character_id,
        scenario_id,
        served_at,
        gold_passed,
        set_source,
        set_source_kind,
    ) in _ratings(study, include_excluded).iterator(chunk_size=CHUNK):
        if item_kind == "diversity":
            source, kind = set_source, set_source_kind
            position, preference = "set", ""
        else:
            position = "left" if source_id == left_source else "right"
            preference = "tie" if is_tie else (preferred or "")
        row = {
            "study": study_slug,
            "item": item,
            "judgment": judgment,
            "annotator": annotator,
            "character": character,
            "scenario": scenario if scenario is not None else "",
            "round": round_ if round_ is not None else "",
            "source": source,
            "source_kind": kind,
            "position": position,
            "metric": metric,
            "value": value,
            "preference": preference,
            "seconds_on_task": seconds_value(seconds),
            "submitted_at": timestamp_text(submitted),
            "human_guess": (guess or "unsure") if guess_asked else "",
            "comment": comment,
            "simulated": simulated,
            "excluded": excluded,
            "is_gold": is_gold,
            "counted": is_counted(excluded=excluded, is_gold=is_gold),
            "answer": answer if answer is not None else "",
            "character_id": character_id,
            "scenario_id": scenario_id if scenario_id is not None else "",
            "served_at": timestamp_text(served_at),
            "gold_passed": gold_passed if gold_passed is not None else "",
            "open_flags": open_flags.get(judgment, ""),
        }
        yield row


def wide_rows(study=None, include_excluded=False) -> Iterator[dict]:
    """One row per judgment: the left and right answer's ratings side by side."""
    current, row = None, None
    for rating in long_rows(study, include_excluded):
        if rating["judgment"] != current:
            if row is not None:
                yield row
            current = rating["judgment"]
            row = {k: rating[k] for k in JUDGMENT_HEAD + JUDGMENT_TAIL}
        row[f"{rating['position']}_source"] = rating["source"]
        row[f"{rating['position']}_answer"] = rating["answer"]
        row[f"{rating['position']}_{rating['metric']}"] = rating["value"]
    if row is not None:
        yield row


def wide_columns(include_excluded=False) -> list[str]:
    metrics = list(Metric.objects.order_by("position").values_list("slug", "for_diversity"))
    columns = [*JUDGMENT_HEAD, "left_source", "right_source", "set_source"]
    columns += ["left_answer", "right_answer"]
    columns += [f"left_{m}" for m, diversity in metrics if not diversity]
    columns += [f"right_{m}" for m, diversity in metrics if not diversity]
    columns += [f"set_{m}" for m, diversity in metrics if diversity]
    return columns + JUDGMENT_TAIL


class _Line:
    """A file-like object whose `write` hands back the line, so that csv.writer can
    produce lines for a stream instead of writing to a file."""

    def write(self, text):
        return text


def csv_header(columns: list[str]) -> str:
    """The CSV kinds' header line, as `export_lines` writes it first."""
    return csv.DictWriter(_Line(), fieldnames=columns, lineterminator="\n").writeheader()


KINDS = ("csv", "jsonl", "wide")


def export_lines(study=None, kind: str = "csv", include_excluded: bool = False) -> Iterator[str]:
    """The export as text lines (header first for the CSV kinds), for a file or an HTTP
    stream alike."""
    if kind == "jsonl":
        for row in long_rows(study, include_excluded):
            yield json.dumps(row, ensure_ascii=False) + "\n"
        return
    if kind == "csv":
        rows = long_rows(study, include_excluded)
        columns = long_columns(include_excluded)
    elif kind == "wide":
        rows = wide_rows(study, include_excluded)
        columns = wide_columns(include_excluded)
    else:
        raise ValueError(f"unknown export kind {kind!r}; use one of {', '.join(KINDS)}")
    writer = csv.DictWriter(_Line(), fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    yield writer.writeheader()
    for row in rows:
        yield writer.writerow({k: neutralise(v) for k, v in row.items()})
