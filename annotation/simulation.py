"""Simulated annotators for demos and benchmarks.

Each simulated annotator has a severity (rates everything a little higher or lower) and
noise; each source has a known true quality per metric. Judgments go through the same
services as real submissions and are marked as simulated.

Workloads are even by default (annotators take turns). Real crowds are skewed: with
`workload_sd` each annotator gets a weight drawn lognormal with that sd, and the next
judgment goes to an annotator drawn in proportion to the weights (among those who can
still be served), so that a few do most of the work (sd 1 over 10 annotators leaves
about 7 effective ones, `annotation.stats.crowd`).
"""

import random
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from . import services, sql
from .models import (
    AnnotatorProfile,
    Assignment,
    ItemKind,
    Judgment,
    Metric,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    Study,
    StudyMembership,
)
from .services.errors import AnnotationError


@dataclass
class TrueEffects:
    """What the simulated ratings are drawn around: quality[source_id][metric_slug]."""

    quality: dict[int, dict[str, float]]
    diversity: dict[int, float]

    def ranking(self) -> list[int]:
        """Sources from best to worst by mean true quality over the pair metrics."""
        return sorted(self.quality, key=lambda s: -np.mean(list(self.quality[s].values())))


def true_effects(study: Study, seed: int) -> TrueEffects:
    rng = np.random.default_rng(seed)
    source_ids = [study.reference_source_id, *study.compared_sources.values_list("pk", flat=True)]
    metrics = list(Metric.objects.filter(for_diversity=False).values_list("slug", flat=True))
    # Distinct, well separated source levels so that a recovered ranking can be checked.
    levels = np.linspace(2.4, 4.2, len(source_ids))
    rng.shuffle(levels)
    quality = {
        source: {metric: float(level + rng.normal(0, 0.1)) for metric in metrics}
        for source, level in zip(source_ids, levels, strict=True)
    }
    diversity = {
        source: float(np.clip(level + rng.normal(0, 0.2), 1, 5))
        for source, level in zip(source_ids, levels, strict=True)
    }
    return TrueEffects(quality=quality, diversity=diversity)


def _rate(rng, truth: float, severity: float, noise: float) -> int:
    return int(np.clip(round(truth + severity + rng.normal(0, noise)), 1, 5))


def simulate_study(
    *, study: Study, annotators: int, seed: int = 0, workload_sd: float = 0.0
) -> tuple[int, TrueEffects]:
    """Fill an open study with simulated judgments. Returns (judgments made, truth)."""
    if study.status != "open":
        raise AnnotationError("study_closed", f"study {study.slug} is not open")
    if Judgment.objects.filter(item__study=study, simulated=False).exists():
        raise AnnotationError(
            "real_judgments",
            f"study {study.slug} has real judgments; refusing to add simulated ones",
        )
    state = random.getstate()
    try:
        seed_the_serving(seed)
        return _simulate(study, annotators, seed, workload_sd)
    finally:
        random.setstate(state)


def seed_the_serving(seed: int) -> None:
    """What serves the items draws too: the lease's coin for the sides from `random`, the
    order among equally complete items from the database's draws (`sql.random_draw`).
    Both seeded here so that a seed gives the same study again where the ids are the same
    (the side schedule is keyed by study and annotator)."""
    random.seed(seed)
    sql.seed_random(seed)


def _simulate(study: Study, annotators: int, seed: int, workload_sd: float):
    rng = np.random.default_rng(seed)
    truth = true_effects(study, seed)
    people = _simulated_annotators(study, annotators)
    severity = {user.pk: rng.normal(0, 0.35) for user in people}
    noise = {user.pk: abs(rng.normal(0.6, 0.15)) for user in people}
    made = 0
    if workload_sd > 0:
        weight = {user.pk: float(rng.lognormal(0.0, workload_sd)) for user in people}
        active = list(people)
        while active:
            chances = np.array([weight[user.pk] for user in active])
            user = active[int(rng.choice(len(active), p=chances / chances.sum()))]
            if _judge_next(rng, study, user, truth, severity, noise):
                made += 1
            else:
                active.remove(user)
    else:
        active = list(people)
        while active:
            still = []
            for user in active:
                if _judge_next(rng, study, user, truth, severity, noise):
                    made += 1
                    still.append(user)
            active = still
    services.study_recompute(study=study)
    return made, truth


def _judge_next(rng, study: Study, user, truth: TrueEffects, severity, noise) -> bool:
    """One simulated judgment by `user`; False when there is nothing left to serve them."""
    lease = services.assignment_next(user=user, study=study)
    if lease is None:
        return False
    # Pretend the annotator took a realistic time over the item.
    seconds = float(rng.gamma(4.0, 15.0))
    Assignment.objects.filter(pk=lease.pk).update(
        served_at=lease.served_at - timedelta(seconds=seconds)
    )
    submission = _submission(
        rng, lease, truth, severity[user.pk], noise[user.pk], study.ask_human_guess
    )
    services.judgment_submit(
        user=user, token=lease.token, submission=submission, simulated=True, refresh=False
    )
    return True


def _simulated_annotators(study: Study, count: int):
    user_model = get_user_model()
    characters = list(study.characters.all())
    # A study with assigned annotators serves only them: the simulated ones join it, or
    # they would be given nothing.
    members = set(StudyMembership.objects.filter(study=study).values_list("annotator", flat=True))
    people = []
    with transaction.atomic():
        for i in range(count):
            email = f"sim-{study.slug}-{i}@simulated.invalid"
            user, created = user_model.objects.get_or_create(
                email=email, defaults={"username": f"sim-{study.slug}-{i}"[:150]}
            )
            if created:
                user.set_unusable_password()
                user.save()
            profile = services.consent_give(user=user)
            AnnotatorProfile.objects.filter(pk=profile.pk).update(
                status=ProfileStatus.APPROVED, simulated=True
            )
            Qualification.objects.bulk_create(
                [
                    Qualification(profile=profile, character=c, status=QualificationStatus.APPROVED)
                    for c in characters
                ],
                ignore_conflicts=True,
            )
            if members and user.pk not in members:
                services.membership_add(study=study, annotator=user, actor=None)
            people.append(user)
    return people


def _submission(rng, lease, truth: TrueEffects, severity, noise, ask_guess) -> services.Submission:
    item = lease.item
    if item.kind == ItemKind.DIVERSITY:
        source = item.diversity_source_id
        return services.Submission(
            ratings={("set", "diversity"): _rate(rng, truth.diversity[source], severity, noise)}
        )
    slots = dict(item.slots.values_list("slot", "answer__source_id"))
    ratings, totals = {}, []
    for position, slot in zip("ab", lease.display_order, strict=True):
        source = slots[slot]
        total = 0.0
        for metric, quality in truth.quality[source].items():
            value = _rate(rng, quality, severity, noise)
            ratings[(position, metric)] = value
            total += value
        totals.append(total)
    difference = totals[0] - totals[1]
    preference = "tie" if abs(difference) < 2 else ("a" if difference > 0 else "b")
    guess = ""
    if ask_guess:
        human_position = next(
            (
                p
                for p, slot in zip("ab", lease.display_order, strict=True)
                if slots[slot] == lease.item.study.reference_source_id
            ),
            None,
        )
        guess = (
            human_position
            if human_position and rng.random() < 0.6
            else rng.choice(["a", "b", "unsure"])
        )
    return services.Submission(ratings=ratings, preference=preference, human_guess=str(guess))


def annotators_for(study: Study) -> int:
    from .selectors import study_capacity

    return max((row.needed for row in study_capacity(study)), default=3)


def simulated_workloads(study: Study) -> list[int]:
    """Judgments per simulated annotator in `study`, most first."""
    from django.db.models import Count

    counts = (
        Judgment.objects.filter(item__study=study, simulated=True)
        .values("annotator")
        .annotate(made=Count("id"))
        .values_list("made", flat=True)
    )
    return sorted(counts, reverse=True)
