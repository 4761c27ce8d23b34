"""Writing runs: a run is a new human source and one task per character x scenario."""

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from dialogues.models import Character, Scenario, Source, SourceKind
from dialogues.services import source_get_or_create

from ..models import FollowupMode, RunStatus, WritingRun, WritingTask
from .errors import WritingError
from .text import clean_text


@transaction.atomic
def run_create(
    *,
    name: str,
    source_slug: str,
    characters: list[Character],
    scenarios: list[Scenario],
    followup_mode: str = FollowupMode.PERSON,
    simulator=None,
    deadline=None,
    writers_per_character: int = 0,
    lease_minutes: int = 60,
    min_chars: int = 10,
    max_chars: int = 400,
    display_name: str = "",
) -> WritingRun:
    """A run and one task per character x scenario; its human source is created here and
    must be new, so that a run's answers never mix with imported ones."""
    name = clean_text(name, limit=200, field=_("The name"))
    if not characters or not scenarios:
        raise WritingError("empty_run", _("Choose at least one character and one scenario."))
    if followup_mode == FollowupMode.SIMULATOR and simulator is None:
        raise WritingError("no_simulator", _("A simulated follow-up needs a simulator endpoint."))
    if not 1 <= min_chars <= max_chars:
        raise WritingError("bad_limits", _("The length limits are not a valid range."))
    if WritingRun.objects.filter(name=name).exists():
        raise WritingError("name_taken", _("A run with this name already exists."))
    if Source.objects.filter(slug=source_slug).exists():
        raise WritingError("source_exists", _("A source with this slug already exists."))
    source, _created = source_get_or_create(
        slug=source_slug, kind=SourceKind.HUMAN, display_name=display_name or source_slug
    )
    run = WritingRun.objects.create(
        name=name,
        source=source,
        followup_mode=followup_mode,
        simulator=simulator,
        deadline=deadline,
        writers_per_character=writers_per_character,
        lease_minutes=lease_minutes,
        min_chars=min_chars,
        max_chars=max_chars,
    )
    run.characters.set(characters)
    run.scenarios.set(scenarios)
    WritingTask.objects.bulk_create(
        WritingTask(run=run, character=character, scenario=scenario)
        for character in characters
        for scenario in scenarios
    )
    return run


def tasks_create_missing(*, run: WritingRun) -> int:
    """Cells added to a run after it was created (in the admin) get their tasks."""
    existing = set(WritingTask.objects.filter(run=run).values_list("character_id", "scenario_id"))
    missing = [
        WritingTask(run=run, character=character, scenario=scenario)
        for character in run.characters.all()
        for scenario in run.scenarios.all()
        if (character.pk, scenario.pk) not in existing
    ]
    # ignore_conflicts: a concurrent save of the same run may have added some already.
    WritingTask.objects.bulk_create(missing, ignore_conflicts=True)
    return len(missing)


def open_runs(now):
    """Runs that take work now: open, and before their deadline if they have one."""
    return WritingRun.objects.filter(status=RunStatus.OPEN).filter(
        Q(deadline__isnull=True) | Q(deadline__gt=now)
    )
