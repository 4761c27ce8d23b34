"""Reads of the collection app: what a run still lacks and how far it has come."""

from dataclasses import dataclass, field

from django.db.models import Count, Max, Min, Q, Sum

from dialogues.models import Character, Scenario

from .models import (
    ApiCall,
    CallOutcome,
    CellFailure,
    CollectionRun,
    GeneratedAnswer,
    ReviewStatus,
)


def run_cells(run: CollectionRun) -> list[tuple[Character, Scenario]]:
    characters = list(run.characters.order_by("id"))
    scenarios = list(Scenario.objects.filter(number__in=run.scenario_numbers).order_by("number"))
    return [(c, s) for s in scenarios for c in characters]


def _generated_in_run_selection(run: CollectionRun):
    return GeneratedAnswer.objects.filter(
        source=run.source,
        character__in=run.characters.all(),
        scenario__number__in=run.scenario_numbers,
        round__in=run.rounds,
    )


def run_missing_cells(run: CollectionRun) -> list[tuple[Character, Scenario]]:
    """Cells that lack an answer for at least one of the run's rounds."""
    have: dict[tuple[int, int], int] = {}
    for character_id, scenario_id in _generated_in_run_selection(run).values_list(
        "character_id", "scenario_id"
    ):
        have[(character_id, scenario_id)] = have.get((character_id, scenario_id), 0) + 1
    rounds = len(run.rounds)
    return [(c, s) for c, s in run_cells(run) if have.get((c.pk, s.pk), 0) < rounds]


@dataclass
class RunProgress:
    requested: int
    accepted: int
    flagged: int
    failed: int
    pending: int
    tokens_in: int
    tokens_out: int
    calls: int
    retried_calls: int
    mean_latency_ms: int | None
    eta_seconds: int | None
    failures: list = field(default_factory=list)
    recent_errors: list = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.accepted + self.flagged

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.requested) if self.requested else 100


def run_progress(run: CollectionRun) -> RunProgress:
    characters = run.characters.count()
    requested = characters * len(run.scenario_numbers) * len(run.rounds)
    counts = _generated_in_run_selection(run).aggregate(
        accepted=Count("pk", filter=Q(review_status=ReviewStatus.ACCEPTED)),
        flagged=Count("pk", filter=Q(review_status=ReviewStatus.FLAGGED)),
        by_this_run=Count("pk", filter=Q(run=run)),
        last=Max("created_at", filter=Q(run=run)),
    )
    failures = CellFailure.objects.filter(run=run).select_related("character", "scenario")
    done = counts["accepted"] + counts["flagged"]
    # A failed cell still owes every round it has no answer for; count it once per round.
    failed = min(failures.count() * len(run.rounds), requested - done)
    calls = ApiCall.objects.filter(run=run).aggregate(
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
        calls=Count("pk"),
        retried=Count("pk", filter=~Q(outcome=CallOutcome.OK)),
        latency=Sum("latency_ms", filter=Q(outcome=CallOutcome.OK)),
        ok=Count("pk", filter=Q(outcome=CallOutcome.OK)),
        first=Min("created_at"),
    )
    pending = requested - done - failed
    eta = None
    if pending and counts["by_this_run"] and calls["first"] and counts["last"]:
        # The pace so far in this run, which already reflects its rate and concurrency.
        seconds_per_answer = (counts["last"] - calls["first"]).total_seconds() / counts[
            "by_this_run"
        ]
        eta = int(seconds_per_answer * pending)
    return RunProgress(
        requested=requested,
        accepted=counts["accepted"],
        flagged=counts["flagged"],
        failed=failed,
        pending=pending,
        tokens_in=calls["tokens_in"] or 0,
        tokens_out=calls["tokens_out"] or 0,
        calls=calls["calls"],
        retried_calls=calls["retried"],
        mean_latency_ms=int(calls["latency"] / calls["ok"]) if calls["ok"] else None,
        eta_seconds=eta,
        failures=list(failures[:50]),
        recent_errors=list(
            ApiCall.objects.filter(run=run)
            .exclude(outcome=CallOutcome.OK)
            .select_related("endpoint")[:20]
        ),
    )


def flagged_answers(run: CollectionRun | None = None):
    answers = GeneratedAnswer.objects.filter(review_status=ReviewStatus.FLAGGED).select_related(
        "character", "scenario", "source", "run"
    )
    return answers.filter(run=run) if run is not None else answers


def round_1_of(answers: list[GeneratedAnswer]) -> dict[int, str]:
    """For each round-2 answer, the round-1 answer its follow-up reacts to (the latest one
    generated for the same source, character and scenario), by the round-2 answer's id: a
    reviewer judges a reply only beside what it replies to."""
    second = [answer for answer in answers if answer.round == 2]
    if not second:
        return {}
    firsts = {
        (row.source_id, row.character_id, row.scenario_id): row.text
        for row in GeneratedAnswer.objects.filter(
            round=1,
            source_id__in={a.source_id for a in second},
            character_id__in={a.character_id for a in second},
            scenario_id__in={a.scenario_id for a in second},
        ).order_by("pk")
    }
    return {
        answer.pk: firsts.get((answer.source_id, answer.character_id, answer.scenario_id), "")
        for answer in second
    }


def runs_overview():
    return CollectionRun.objects.select_related("source", "endpoint").order_by("-created_at")
