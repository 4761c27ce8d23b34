"""Reads for fan writing: what a writer sees, and the staff's view of a run."""

from dataclasses import dataclass

from django.db.models import Count
from django.utils import timezone

from annotation.models import Qualification, QualificationStatus
from annotation.selectors import is_break_due
from dialogues.models import Character

from .models import ApplicationStatus, TaskState, WriterApplication, WritingRun, WritingTask

# A writer is reminded to pause after this many dialogues, or after this long at it.
BREAK_EVERY_DIALOGUES = 8
BREAK_EVERY_MINUTES = 40


def writing_break_due(user) -> bool:
    """The rating page's rule (a sitting ends after a 10-minute gap), on handed-in
    dialogues."""
    now = timezone.now()
    start_of_day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    handed_in = WritingTask.objects.filter(writer=user, submitted_at__gte=start_of_day).order_by(
        "submitted_at"
    )
    today = [
        (at, BREAK_EVERY_DIALOGUES, BREAK_EVERY_MINUTES)
        for at in handed_in.values_list("submitted_at", flat=True)
    ]
    return is_break_due(today, now)


@dataclass
class WriterOverview:
    applications: list[WriterApplication]
    can_apply: list[Character]
    screened: bool
    tasks: list[WritingTask]
    approved: bool


def writer_overview(user) -> WriterOverview:
    applications = list(WriterApplication.objects.filter(user=user).select_related("character"))
    applied = {a.character_id for a in applications if a.status != ApplicationStatus.REJECTED}
    screened_ids = set(
        Qualification.objects.filter(
            profile__user=user,
            profile__consented_at__isnull=False,
            status__in=[QualificationStatus.PASSED, QualificationStatus.APPROVED],
        ).values_list("character_id", flat=True)
    )
    return WriterOverview(
        applications=applications,
        can_apply=list(
            Character.objects.filter(pk__in=screened_ids - applied).order_by("work_zh", "name_zh")
        ),
        screened=bool(screened_ids),
        tasks=list(
            WritingTask.objects.filter(writer=user)
            .exclude(state=TaskState.OPEN)
            .select_related("run", "character", "scenario")
            .order_by("-leased_at")[:50]
        ),
        approved=any(a.status == ApplicationStatus.APPROVED for a in applications),
    )


def pending_applications():
    return (
        WriterApplication.objects.filter(status=ApplicationStatus.PENDING)
        .select_related("character", "user__annotator_profile")
        .order_by("created_at")
    )


@dataclass
class RunProgress:
    run: WritingRun
    counts: dict[str, int]
    total: int

    @property
    def accepted(self) -> int:
        return self.counts.get(TaskState.ACCEPTED, 0)

    @property
    def percent(self) -> int:
        return round(100 * self.accepted / self.total) if self.total else 0

    @property
    def states(self) -> list[tuple[str, int]]:
        return [(label, self.counts.get(value, 0)) for value, label in TaskState.choices]


def runs_progress() -> list[RunProgress]:
    runs = list(WritingRun.objects.select_related("source"))
    counts: dict[int, dict[str, int]] = {}
    for row in WritingTask.objects.values("run_id", "state").annotate(n=Count("pk")):
        counts.setdefault(row["run_id"], {})[row["state"]] = row["n"]
    return [
        RunProgress(
            run=run, counts=counts.get(run.pk, {}), total=sum(counts.get(run.pk, {}).values())
        )
        for run in runs
    ]


def run_tasks(run: WritingRun):
    return (
        WritingTask.objects.filter(run=run)
        .exclude(state=TaskState.OPEN)
        .select_related("character", "scenario", "writer__annotator_profile")
        .order_by("state", "character_id", "scenario__number")
    )
