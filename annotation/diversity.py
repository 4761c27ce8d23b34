"""Diversity sets, pure and without a database: which answers each of a study's sets
gathers. Kept apart from the serving so that a study not yet opened can say how many
annotators its sets will need (selectors) with the very draw that opening makes (services).
"""

import random
from collections.abc import Iterable


def diversity_sets(
    study_id: int, answers: Iterable[tuple[int, int, int, int, int]], set_size: int
) -> list[tuple[int, int, list[int]]]:
    """A study's diversity sets, as (character, source, answer ids): per character and
    source, `set_size` of its round-1 answers drawn at random. The draw is seeded by the
    study, so the sets are known before opening makes them: the number of annotators a
    study needs depends on which scenarios they take from. `answers` holds (character,
    scenario, round, source, answer id) for every answer the study's items may show."""
    rng = random.Random(f"diversity-{study_id}")
    round_1: dict[tuple[int, int], list[int]] = {}
    for character_id, _scenario_id, round_, source_id, answer_id in sorted(answers):
        if round_ == 1:
            round_1.setdefault((character_id, source_id), []).append(answer_id)
    return [
        (character_id, source_id, rng.sample(ids, set_size))
        for (character_id, source_id), ids in round_1.items()
        if len(ids) >= set_size
    ]
