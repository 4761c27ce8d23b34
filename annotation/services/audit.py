"""Recording staff actions. Every write service that staff trigger calls `record`, in the
same transaction as the change, so a change and its audit row stand or fall together."""

from ..models import AuditEvent, Study


def record(**fields) -> AuditEvent:
    """Write the event `event_of(**fields)` describes (the same keyword arguments)."""
    event = event_of(**fields)
    event.save()
    return event


def record_all(events: list[AuditEvent]) -> None:
    """Several events (`event_of`) written in one statement: one action over many
    targets."""
    AuditEvent.objects.bulk_create(events)


def event_of(
    *,
    actor,
    action: str,
    target,
    study: Study | None = None,
    before: dict | None = None,
    after: dict | None = None,
    note: str = "",
    target_label: str = "",
) -> AuditEvent:
    """The event `record` writes, not yet written."""
    actor = actor if actor is not None and actor.is_authenticated else None
    return AuditEvent(
        actor=actor,
        actor_label=actor.email if actor is not None else "",
        action=action,
        target_type=target._meta.model_name,
        target_id=str(target.pk),
        target_label=(target_label or str(target))[:300],
        study=study,
        before=before or {},
        after=after or {},
        note=note,
    )


def changes(before: dict, after: dict) -> tuple[dict, dict]:
    """Only the fields that differ, as (before, after)."""
    changed = [key for key in after if before.get(key) != after[key]]
    return {key: before.get(key) for key in changed}, {key: after[key] for key in changed}
