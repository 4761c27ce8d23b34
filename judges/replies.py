"""Reading a judge's reply: one JSON object with every metric of both answers rated 1-5
and a preference. Servers without structured output wrap the object in prose or a code
fence; the first object in the text is taken and checked just as strictly. Anything else
is refused with the reason, so it is retried and, in the end, recorded as a failure."""

import json
from dataclasses import dataclass

from .prompts import PREFERENCES, SIDES


class ReplyInvalid(Exception):
    """The reply is not a complete, valid verdict; the message says what is wrong."""


@dataclass(frozen=True)
class Verdict:
    ratings: dict[str, dict[str, int]]  # side letter -> metric slug -> 1..5
    preference: str  # "A", "B" or "tie"


def _first_object(text: str):
    decoder = json.JSONDecoder()
    for start, character in enumerate(text):
        if character == "{":
            try:
                found, _end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            if isinstance(found, dict):
                return found
    raise ReplyInvalid("no JSON object in the reply")


def verdict_read(text: str, metric_slugs: list[str]) -> Verdict:
    found = _first_object(text or "")
    ratings = found.get("ratings")
    if not isinstance(ratings, dict):
        raise ReplyInvalid("no 'ratings' object")
    read: dict[str, dict[str, int]] = {}
    for side in SIDES:
        scores = ratings.get(side, ratings.get(side.lower()))
        if not isinstance(scores, dict):
            raise ReplyInvalid(f"no ratings for answer {side}")
        read[side] = {}
        for slug in metric_slugs:
            value = scores.get(slug)
            # JSON true is an int in Python; a rating is a number from 1 to 5, nothing else.
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
                raise ReplyInvalid(f"answer {side}, {slug}: {value!r} is not a rating from 1 to 5")
            read[side][slug] = value
    preference = found.get("preference")
    if isinstance(preference, str) and preference.strip().upper() in ("A", "B", "TIE"):
        preference = preference.strip().upper().replace("TIE", "tie")
    if preference not in PREFERENCES:
        raise ReplyInvalid(f"preference {preference!r} is not A, B or tie")
    return Verdict(ratings=read, preference=preference)
