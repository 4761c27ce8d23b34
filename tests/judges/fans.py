"""Human fans with a known policy, rating a study through the annotators' own services:
each answer's score on every metric is the neutral policy's score of its text (what the
`neutral` judge gives it) plus noise, and the preference is the higher score's, a few
flipped at random. So they prefer no side, no length and no source."""

import numpy as np

from annotation import services
from annotation.models import ItemKind
from annotation.selectors import metrics_for
from annotation.simulation import annotators_for, seed_the_serving
from tests.builders import approved_annotator
from tests.fixtures.judge_server import neutral


def fans_rate(study, *, seed: int = 7) -> int:
    """Every annotator the study needs rates until nothing is left; returns judgments."""
    rng = np.random.default_rng(seed)
    # The sides and the order of equally complete items are drawn too: seeded as a
    # simulated study seeds them, so every run sees the same fans.
    seed_the_serving(seed)
    metrics = metrics_for(diversity=False)
    fans = [
        approved_annotator(f"fan{i}@example.com", list(study.characters.all()))
        for i in range(annotators_for(study))
    ]
    made, active = 0, list(fans)
    while active:
        still = []
        for fan in active:
            lease = services.assignment_next(user=fan, study=study)
            if lease is None:
                continue
            assert lease.item.kind == ItemKind.PAIR
            slots = {s.slot: s.answer for s in lease.item.slots.all()}
            texts = [slots[slot].text.strip() for slot in lease.display_order]
            score_a, score_b, preference = neutral(*texts)
            ratings = {}
            for position, score in (("a", score_a), ("b", score_b)):
                for metric in metrics:
                    noisy = score + int(rng.choice([-1, 0, 0, 0, 1]))
                    ratings[(position, metric.slug)] = int(np.clip(noisy, 1, 5))
            if preference != "tie" and rng.random() < 0.1:
                preference = "B" if preference == "A" else "A"
            services.judgment_submit(
                user=fan,
                token=lease.token,
                submission=services.Submission(ratings=ratings, preference=preference.lower()),
                refresh=False,
            )
            made += 1
            still.append(fan)
        active = still
    return made
