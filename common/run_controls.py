"""Pause, resume and cancel for a run of model calls (a collection run, a judge run): one
transition table for every kind of run, the run locked while its status changes, the change
audited, and a resumed run handed back to the workers. Each app supplies its run model, its
statuses, its audit actions, its refusal and how its runs are enqueued; `common` imports
no app, so the audit recorder comes in as a function too."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from .errors import Refusal

ACTIONS = ("pause", "resume", "cancel")


@dataclass(frozen=True)
class RunControls:
    """`statuses` is the run's status choices, with RUNNING, PAUSED, FAILED and CANCELLED;
    `audited` maps each action to its audit action; `record` is the audit recorder
    (`annotation.services.audit.record`); `enqueue(run=...)` sends a resumed run's
    missing work once the transaction commits."""

    model: Any
    statuses: Any
    audited: dict[str, str]
    refusal: type[Refusal]
    record: Callable[..., object]
    enqueue: Callable[..., None]

    def transitions(self) -> dict[str, tuple[set, str]]:
        s = self.statuses
        return {
            "pause": ({s.RUNNING}, s.PAUSED),
            "resume": ({s.PAUSED, s.FAILED}, s.RUNNING),
            "cancel": ({s.RUNNING, s.PAUSED, s.FAILED}, s.CANCELLED),
        }

    def apply(self, *, run, action: str, by=None):
        """The run, locked and changed by `action`; an unknown action, or one the run's
        status does not allow, raises the app's refusal and changes nothing."""
        transitions = self.transitions()
        if action not in transitions:
            raise self.refusal("bad_action", f"unknown action {action!r}")
        allowed_from, to = transitions[action]
        with transaction.atomic():
            run = self.model.objects.select_for_update().get(pk=run.pk)
            if run.status not in allowed_from:
                raise self.refusal(
                    "bad_transition",
                    f"a {run.get_status_display().lower()} run cannot be {action}d",
                )
            before = run.status
            run.status = to
            if to == self.statuses.RUNNING:
                run.error = ""
            run.save(update_fields=["status", "error"])
            self.record(
                actor=by,
                action=self.audited[action],
                target=run,
                target_label=str(run),
                before={"status": before},
                after={"status": to},
            )
            if to == self.statuses.RUNNING:
                self.enqueue(run=run)
        return run
