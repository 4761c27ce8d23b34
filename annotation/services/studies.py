"""Creating and opening studies: item generation in bulk."""

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce
from django.utils.text import slugify
from django.utils.translation import gettext as _

from common.text import plain_text
from dialogues.models import Character, Source
from dialogues.planner import planner_statistics_refresh

from .. import selectors
from ..diversity import diversity_sets
from ..models import (
    AuditAction,
    CharacterProgress,
    Item,
    ItemAnswer,
    ItemExposure,
    ItemKind,
    PairingDesign,
    Study,
    StudyStatus,
)
from ..pairing import source_pairs
from . import audit
from .errors import AnnotationError

BATCH_SIZE = 5000


@transaction.atomic
def study_create(
    *,
    name: str,
    reference: Source,
    compared: list[Source],
    characters: list[Character],
    rounds: tuple[int, ...] = (1, 2),
    overlap: int = 3,
    include_diversity: bool = False,
    ask_human_guess: bool = False,
    design: str = PairingDesign.REFERENCE,
    actor=None,
    **options,
) -> Study:
    if design not in PairingDesign.values:
        raise AnnotationError(
            "design", f"unknown pairing design {design!r}; use reference or round-robin"
        )
    if reference in compared:
        raise AnnotationError("reference_compared", "the reference source cannot also be compared")
    if not compared:
        raise AnnotationError("no_sources", "choose at least one source to compare")
    if not characters:
        raise AnnotationError("no_characters", "choose at least one character")
    if not set(rounds) or not set(rounds) <= {1, 2}:
        raise AnnotationError("rounds", "rounds must be 1, 2 or both")
    if overlap < 1:
        raise AnnotationError("overlap", "the overlap must be at least 1")
    base = slugify(name) or "study"
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    study = Study.objects.create(
        slug=slug,
        name=name,
        reference_source=reference,
        rounds=sorted(set(rounds)),
        overlap=overlap,
        include_diversity=include_diversity,
        ask_human_guess=ask_human_guess,
        design=design,
        **options,
    )
    study.compared_sources.set(compared)
    study.characters.set(characters)
    study_created_record(study=study, actor=actor)
    return study


def study_created_record(*, study: Study, actor) -> None:
    """Audit a new study with the design it starts from."""
    audit.record(
        actor=actor,
        action=AuditAction.STUDY_CREATE,
        target=study,
        study=study,
        after={
            "name": study.name,
            "reference_source": study.reference_source_id,
            "compared_sources": sorted(study.compared_sources.values_list("pk", flat=True)),
            "characters": sorted(study.characters.values_list("pk", flat=True)),
            "rounds": study.rounds,
            "overlap": study.overlap,
            "design": study.design,
        },
    )


@transaction.atomic
def study_open(*, study: Study, actor=None) -> int:
    """Open a study, generating its items on first opening. Returns the item count."""
    locked = Study.objects.select_for_update().get(pk=study.pk)
    before = locked.status
    generated = not locked.items.exists()
    if generated:
        _generate_items(locked)
        planner_statistics_refresh(Item, ItemAnswer, ItemExposure)
    locked.status = StudyStatus.OPEN
    locked.save(update_fields=["status"])
    study.status = locked.status
    count = locked.items.count()
    if before == StudyStatus.OPEN and not generated:
        return count  # already open: nothing changed, nothing to record
    audit.record(
        actor=actor,
        action=AuditAction.STUDY_RESUME if before == StudyStatus.PAUSED else AuditAction.STUDY_OPEN,
        target=locked,
        study=locked,
        before={"status": before},
        after={"status": locked.status, "items": count, "items_generated": generated},
    )
    return count


# How the trail names a change to each status (opening is study_open's, and a return to
# draft stays a plain status change).
STATUS_ACTIONS = {
    StudyStatus.PAUSED: AuditAction.STUDY_PAUSE,
    StudyStatus.CLOSED: AuditAction.STUDY_CLOSE,
}


@transaction.atomic
def study_set_status(*, study: Study, status: str, actor=None) -> Study:
    if status not in StudyStatus.values:
        raise AnnotationError("status", _("Unknown study status."))
    if status == StudyStatus.OPEN:
        study_open(study=study, actor=actor)
        return study
    before = Study.objects.select_for_update().values_list("status", flat=True).get(pk=study.pk)
    study.status = status
    study.save(update_fields=["status"])
    audit.record(
        actor=actor,
        action=STATUS_ACTIONS.get(status, AuditAction.STUDY_STATUS),
        target=study,
        study=study,
        before={"status": before},
        after={"status": status},
    )
    return study


CAP_FIELDS = ("cap_per_annotator", "cap_per_annotator_per_day")


@transaction.atomic
def study_caps_set(*, study: Study, actor, caps: dict, note: str = "") -> Study:
    """Change the study's per-annotator caps (0 for no cap). Refuses anything but whole
    numbers of 0 or more, and then changes nothing."""
    values = {}
    for field in CAP_FIELDS:
        raw = caps.get(field)
        try:
            value = int(str(raw).strip())
        except (TypeError, ValueError):
            value = -1
        if value < 0:
            raise AnnotationError("cap", _("A cap must be a whole number of 0 or more."))
        values[field] = value
    locked = Study.objects.select_for_update().get(pk=study.pk)
    before, after = audit.changes({f: getattr(locked, f) for f in CAP_FIELDS}, values)
    if not after:
        return locked
    for field, value in after.items():
        setattr(locked, field, value)
        setattr(study, field, value)
    locked.save(update_fields=list(after))
    audit.record(
        actor=actor,
        action=AuditAction.STUDY_CHANGE,
        target=locked,
        study=locked,
        before=before,
        after=after,
        note=plain_text(note),
    )
    return study


def item_gold_record(*, item: Item, actor, before: bool) -> None:
    """Audit marking an item as gold (or unmarking it), made in the Django admin, and
    count its character's progress afresh once that is committed: a gold item is not part
    of it. Counted after the commit, when the admin no longer holds the item's row, so that
    it never waits on a submission that waits on the item."""
    character_progress_recount_later(study=item.study, character_ids=[item.character_id])
    audit.record(
        actor=actor,
        action=AuditAction.STUDY_CHANGE,
        target=item,
        target_label=f"item {item.pk}",
        study=item.study,
        before={"is_gold": before},
        after={"is_gold": item.is_gold},
    )


def character_progress_recount_later(*, study: Study, character_ids) -> None:
    """`character_progress_recount` once the current transaction is committed: staff's
    changes to items (in the admin) hold the items' rows until then, and a recount that
    waited on a submission waiting on one of those rows would never end."""
    transaction.on_commit(
        lambda: character_progress_recount(study=study, character_ids=character_ids)
    )


def character_progress_recount(*, study: Study, character_ids=None) -> None:
    """Count the study's progress per character (`CharacterProgress`) afresh from its
    items, gold aside; only `character_ids` when given. The rows are locked before the
    items are read: a submission that counts a judgment of these characters has then
    either committed, and its item's count is read here, or waits and counts it after."""
    items = Item.objects.filter(study=study)
    rows = CharacterProgress.objects.select_for_update().filter(study=study)
    if character_ids is not None:
        items = items.filter(character_id__in=character_ids)
        rows = rows.filter(character_id__in=character_ids)
    not_gold = Q(is_gold=False)
    with transaction.atomic():
        list(rows.values_list("pk", flat=True))
        counted = (
            items.order_by()
            .values("character_id")
            .annotate(
                items=Count("pk", filter=not_gold),
                judgments=Coalesce(Sum("judgment_count", filter=not_gold), 0),
            )
        )
        CharacterProgress.objects.bulk_create(
            [
                CharacterProgress(
                    study=study,
                    character_id=row["character_id"],
                    items=row["items"],
                    judgments=row["judgments"],
                )
                for row in counted
            ],
            update_conflicts=True,
            unique_fields=["study", "character"],
            update_fields=["items", "judgments"],
        )


def gold_expectations_of(item: Item) -> list[dict]:
    """The expected ranges of a gold item, in a stable order, as the audit shows them."""
    return [
        {
            "answer": row["answer_id"],
            "metric": row["metric__slug"] or "",
            "minimum": row["minimum"],
            "maximum": row["maximum"],
        }
        for row in item.gold_expectations.order_by("answer_id", "metric__slug", "pk").values(
            "answer_id", "metric__slug", "minimum", "maximum"
        )
    ]


def gold_expectations_record(*, item: Item, actor, before: list[dict]) -> None:
    """Audit the expected ranges of a gold item as edited in the Django admin: what a
    gold check counts as passing decides which annotators get flagged."""
    after = gold_expectations_of(item)
    if after != before:
        audit.record(
            actor=actor,
            action=AuditAction.STUDY_CHANGE,
            target=item,
            target_label=f"item {item.pk}",
            study=item.study,
            before={"gold_expectations": before},
            after={"gold_expectations": after},
        )


def study_change_record(*, study: Study, actor, before: dict, after: dict) -> None:
    """Audit an edit made elsewhere (the Django admin's study form) field by field."""
    before, after = audit.changes(before, after)
    if after:
        audit.record(
            actor=actor,
            action=AuditAction.STUDY_CHANGE,
            target=study,
            study=study,
            before=before,
            after=after,
        )


def _generate_items(study: Study) -> None:
    """All items of the study in a few bulk inserts: pairs per the design, their
    exposures (rated answers plus round-1 context), and diversity sets."""
    compared_ids = list(study.compared_sources.values_list("pk", flat=True))
    answer_id = {
        (character_id, scenario_id, round_, source_id): pk
        for pk, character_id, scenario_id, round_, source_id in selectors.study_answers(
            study
        ).values_list("pk", "character_id", "scenario_id", "round", "source_id")
    }
    cells = sorted({(c, s) for c, s, _r, _src in answer_id})
    pairs = source_pairs(study.design, study.reference_source_id, compared_ids)

    # (character, scenario, round, [answer ids by slot], [exposed answer ids], set's source)
    planned = []
    for character_id, scenario_id in cells:
        for round_ in study.rounds:
            for first, second in pairs:
                slots = [
                    answer_id.get((character_id, scenario_id, round_, s)) for s in (first, second)
                ]
                if None in slots:
                    continue
                exposed = list(slots)
                if round_ == 2:
                    context = [
                        answer_id.get((character_id, scenario_id, 1, s)) for s in (first, second)
                    ]
                    exposed += [a for a in context if a is not None]
                planned.append((character_id, scenario_id, round_, slots, exposed, None))

    if study.include_diversity:
        for character_id, source_id, chosen in diversity_sets(
            study.pk, [(*cell, pk) for cell, pk in answer_id.items()], study.diversity_set_size
        ):
            planned.append((character_id, None, None, chosen, chosen, source_id))

    items = Item.objects.bulk_create(
        (
            Item(
                study=study,
                kind=ItemKind.PAIR if scenario_id else ItemKind.DIVERSITY,
                character_id=character_id,
                scenario_id=scenario_id,
                round=round_,
                diversity_source_id=set_source,
            )
            for character_id, scenario_id, round_, _slots, _exposed, set_source in planned
        ),
        batch_size=BATCH_SIZE,
    )
    ItemAnswer.objects.bulk_create(
        (
            ItemAnswer(item=item, answer_id=answer, slot=slot)
            for item, (_c, _s, _r, slots, _e, _src) in zip(items, planned, strict=True)
            for slot, answer in enumerate(slots)
        ),
        batch_size=BATCH_SIZE,
    )
    ItemExposure.objects.bulk_create(
        (
            ItemExposure(item=item, answer_id=answer)
            for item, (_c, _s, _r, _slots, exposed, _src) in zip(items, planned, strict=True)
            for answer in exposed
        ),
        batch_size=BATCH_SIZE,
    )
    character_progress_recount(study=study)
