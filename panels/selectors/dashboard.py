"""Reads of a panel study's staff dashboard: participants by state, codes given, time and
pay, and the payment file's rows."""

import statistics
from dataclasses import dataclass

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Judgment

from ..models import GONE_STATES, PAID_STATES, PanelStudy, Participant, ParticipantState

# What the dashboard counts, in the order it shows them; "awaiting review" is not a state
# of its own but a finished participant whose quality signals await a person's decision.
DASHBOARD_STATES = (
    ParticipantState.STARTED,
    ParticipantState.SCREENED_OUT,
    ParticipantState.COMPLETED,
    ParticipantState.FAILED_CHECKS,
    ParticipantState.RETURNED,
    ParticipantState.TIMED_OUT,
)


@dataclass(frozen=True)
class PanelSummary:
    by_state: dict[str, int]
    awaiting_review: int
    # Codes given, by code: what the panel will see come back.
    codes: dict[str, int]
    median_minutes: float | None
    # What a completed participant earned per hour at the median time; None without a
    # reward or a completion.
    hourly_pay_minor_units: int | None
    # Everyone who came but those who returned or timed out: what `places` limits.
    places_taken: int


def panel_summary(panel_study: PanelStudy) -> PanelSummary:
    """Participants by state, codes given, the median time of a completed batch and the
    effective hourly pay it makes of the reward."""
    participants = Participant.objects.filter(panel_study=panel_study)
    counted = dict(
        participants.values_list("state").annotate(n=Count("pk")).values_list("state", "n")
    )
    codes = dict(
        participants.exclude(code="")
        .values_list("code")
        .annotate(n=Count("pk"))
        .values_list("code", "n")
    )
    durations = sorted(
        (finished - started).total_seconds() / 60
        for started, finished in participants.filter(
            state=ParticipantState.COMPLETED, finished_at__isnull=False
        ).values_list("started_at", "finished_at")
    )
    median = statistics.median(durations) if durations else None
    hourly = None
    if median and panel_study.reward_minor_units:
        # A batch finished in under a minute would make an absurd rate; a minute is the floor.
        hourly = round(panel_study.reward_minor_units * 60 / max(median, 1.0))
    return PanelSummary(
        by_state={state: counted.get(state, 0) for state in DASHBOARD_STATES},
        awaiting_review=participants_awaiting_review(panel_study).count(),
        codes=codes,
        median_minutes=median,
        hourly_pay_minor_units=hourly,
        places_taken=sum(n for state, n in counted.items() if state not in GONE_STATES),
    )


def participants_awaiting_review(panel_study: PanelStudy):
    """Finished, paid participants whose quality signals marked them for a person to look
    at, with no decision yet: signals never decide pay on their own."""
    return (
        Participant.objects.filter(panel_study=panel_study, state__in=PAID_STATES, decision="")
        .exclude(review_reasons={})
        .order_by("finished_at", "pk")
    )


def participants_for_staff(
    panel_study: PanelStudy, *, state: str = "", awaiting_review: bool = False
):
    """The study's participants for the dashboard, newest first, with their pseudonym
    and the number of judgments they gave: all, those in `state`, or those awaiting
    review."""
    rated = (
        Judgment.objects.filter(annotator_id=OuterRef("user_id"), study_id=panel_study.study_id)
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    participants = (
        Participant.objects.filter(panel_study=panel_study)
        .select_related("user__annotator_profile")
        .annotate(rated=Coalesce(Subquery(rated), 0))
        .order_by("-started_at", "-pk")
    )
    if awaiting_review:
        participants = participants.filter(
            pk__in=participants_awaiting_review(panel_study).values("pk")
        )
    return participants.filter(state=state) if state else participants


def payment_rows(panel_study: PanelStudy):
    """What the panel is paid by: one row per participant, by panel id. For those who pay
    only (never part of a research export)."""
    return (
        Participant.objects.filter(panel_study=panel_study)
        .order_by("started_at", "pk")
        .values_list(
            "pid",
            "session_id",
            "state",
            "code",
            "decision",
            "bonus_minor_units",
            "started_at",
            "finished_at",
        )
    )
