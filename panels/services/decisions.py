"""What staff decide about a panel study's participants and tell the panel: approve,
reject, ask to return, pay bonuses; and what they do to the study on the panel: pause,
resume, change its places.

For Prolific each decision is a call to Prolific's API (`panels.prolific`), made first,
with the participants' rows locked (two staff deciding at once never pay a bonus twice);
our records change only after Prolific said yes, so an error changes nothing here (a
`PanelError` with code "prolific" says what Prolific answered). For any other panel there
is no API: the decision is recorded here, for the payment file staff upload to the panel.

Every decision is audited with the staff member as actor. Refused, changing nothing: a
reason missing, a bonus below one minor unit, a participant of another study, a decision
on someone whose batch is not over, or on a submission already decided."""

from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import AuditAction
from annotation.services import audit

from .. import prolific
from ..models import Decision, PanelStudy, Participant, ParticipantState, Provider
from .errors import PanelError
from .prolific_calls import prolific_call, prolific_client

REASON_MAX_CHARS = 2000
# A single bonus above this (in minor units: 500.00 in pounds or dollars) is taken for a
# slip of the keyboard (pounds typed as pence the other way round) and refused.
BONUS_MOST = 50_000


def _who(participant: Participant) -> str:
    """A participant as staff see them everywhere: by pseudonym (never the panel id)."""
    return participant.user.annotator_profile.pseudonym


def _is_prolific(panel_study: PanelStudy) -> bool:
    return panel_study.provider == Provider.PROLIFIC


def _locked_participants(panel_study: PanelStudy, participants: Iterable[Participant]):
    """The participants' rows, locked, in the order given; refused if one is of another
    panel study (or not saved), or if one is given twice."""
    wanted = [participant.pk for participant in participants]
    if not wanted:
        raise PanelError("participants", _("Choose at least one participant."))
    if len(set(wanted)) != len(wanted):
        raise PanelError("participants", _("A participant was given twice; nothing was changed."))
    found = {
        participant.pk: participant
        for participant in Participant.objects.select_for_update(of=("self",))
        .select_related("user", "panel_study__study")
        .filter(pk__in=wanted, panel_study=panel_study)
    }
    if len(found) != len(wanted):
        raise PanelError(
            "other_study",
            _("Some of these participants are not of this study; nothing was changed."),
        )
    return [found[pk] for pk in wanted]


def _locked_one(participant: Participant) -> Participant:
    return _locked_participants(participant.panel_study, [participant])[0]


def _decidable(participant: Participant, *, allow_returned: bool = False) -> None:
    """A submission can be decided once the batch is over (not while the person is still
    at it) and only once; a returned one has nothing left to decide but a bonus."""
    if participant.state == ParticipantState.STARTED:
        raise PanelError(
            "not_finished",
            _("%(who)s has not finished their batch yet; nothing was changed.")
            % {"who": _who(participant)},
        )
    if participant.state == ParticipantState.RETURNED and not allow_returned:
        raise PanelError(
            "returned",
            _("%(who)s returned the study; there is no submission to decide.")
            % {"who": _who(participant)},
        )
    if participant.decision:
        raise PanelError(
            "already_decided",
            _("%(who)s was already decided (%(decision)s); nothing was changed.")
            % {"who": _who(participant), "decision": participant.get_decision_display()},
        )


def _submission_id(participant: Participant) -> str:
    if not participant.session_id:
        raise PanelError(
            "no_submission",
            _(
                "%(who)s came without Prolific's SESSION_ID, so their submission is not "
                "known here; decide it on Prolific's site."
            )
            % {"who": _who(participant)},
        )
    return participant.session_id


def _reason(reason, *, least: int = 1) -> str:
    text = reason.strip() if isinstance(reason, str) else ""
    if not text:
        raise PanelError("reason", _("Give the reason; the participant will read it."))
    if len(text) > REASON_MAX_CHARS:
        raise PanelError(
            "reason",
            _("The reason must be at most %(most)d characters.") % {"most": REASON_MAX_CHARS},
        )
    if len(text) < least:
        raise PanelError(
            "reason",
            _("Prolific needs a reason of at least %(least)d characters (this one has %(has)d).")
            % {"least": least, "has": len(text)},
        )
    return text


def _decide(participant: Participant, decision: str, note: str, actor) -> None:
    participant.decision = decision
    participant.decision_note = note
    participant.decided_at = timezone.now()
    participant.save(update_fields=["decision", "decision_note", "decided_at"])
    audit.record(
        actor=actor,
        action=AuditAction.PANEL_DECISION,
        target=participant,
        target_label=_who(participant),
        study=participant.panel_study.study,
        before={"decision": ""},
        after={"decision": decision, "decision_note": note},
    )


@transaction.atomic
def submissions_approve(*, panel_study: PanelStudy, participants, actor) -> list[Participant]:
    """Approve the submissions of finished participants (Prolific pays them their
    reward); for another panel, record the approvals for the payment file."""
    locked = _locked_participants(panel_study, participants)
    if len(locked) > prolific.BULK_APPROVE_MOST:
        raise PanelError(
            "participants",
            _("Approve at most %(most)d participants at a time.")
            % {"most": prolific.BULK_APPROVE_MOST},
        )
    for participant in locked:
        _decidable(participant)
    if _is_prolific(panel_study):
        ids = [_submission_id(participant) for participant in locked]
        prolific_call(prolific_client().submissions_approve, ids)
    for participant in locked:
        _decide(participant, Decision.APPROVED, "", actor)
    return locked


@transaction.atomic
def submission_reject(
    *, participant: Participant, reason, actor, category: str = "OTHER"
) -> Participant:
    """Reject a finished participant's submission, telling them `reason`. On Prolific
    with `category`, one of `prolific.REJECTION_CATEGORIES` (OTHER unless told), and a
    reason of at least 100 characters, as Prolific requires."""
    panel_study = participant.panel_study
    on_prolific = _is_prolific(panel_study)
    text = _reason(reason, least=prolific.REJECTION_MESSAGE_MIN_CHARS if on_prolific else 1)
    if on_prolific and category not in prolific.REJECTION_CATEGORIES:
        raise PanelError(
            "category",
            _("The rejection category must be one of %(categories)s.")
            % {"categories": ", ".join(prolific.REJECTION_CATEGORIES)},
        )
    locked = _locked_one(participant)
    _decidable(locked)
    if on_prolific:
        prolific_call(
            prolific_client().submission_reject,
            _submission_id(locked),
            message=text,
            category=category,
        )
    _decide(locked, Decision.REJECTED, text, actor)
    return locked


@transaction.atomic
def submission_return_ask(*, participant: Participant, reason, actor) -> Participant:
    """Ask a finished participant to return their submission (a technical problem, a
    batch that cannot be used through no fault of theirs), telling them `reason`."""
    text = _reason(reason)
    locked = _locked_one(participant)
    _decidable(locked)
    if _is_prolific(locked.panel_study):
        prolific_call(
            prolific_client().submission_return_request, _submission_id(locked), reasons=[text]
        )
    _decide(locked, Decision.RETURN_ASKED, text, actor)
    return locked


def _bonus_amount(amount) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise PanelError("bonus", _("A bonus is a whole number of minor units (pence, cents)."))
    if amount < 1:
        raise PanelError("bonus", _("A bonus must be at least 1 minor unit (a penny or a cent)."))
    if amount > BONUS_MOST:
        raise PanelError(
            "bonus",
            _("A bonus of more than %(most)d minor units is refused as a likely slip.")
            % {"most": BONUS_MOST},
        )
    return amount


def _prolific_study_id(panel_study: PanelStudy, participants=None) -> str:
    """The study's id on Prolific: the panel study's own if staff set it, else the
    STUDY_ID that the links of its participants (or of `participants`) all carried."""
    if panel_study.prolific_study_id:
        return panel_study.prolific_study_id
    if participants is None:
        carried = set(
            Participant.objects.filter(panel_study=panel_study)
            .exclude(prolific_study_id="")
            .values_list("prolific_study_id", flat=True)
            .distinct()[:2]
        )
    else:
        carried = {participant.prolific_study_id for participant in participants}
    if len(carried) == 1 and "" not in carried:
        return carried.pop()
    raise PanelError(
        "no_prolific_study",
        _(
            "The Prolific study id of this study is not known: it is not set, and the "
            "participants' links did not all carry the same STUDY_ID."
        ),
    )


@transaction.atomic
def bonuses_pay(*, panel_study: PanelStudy, bonuses: dict, actor) -> list[Participant]:
    """Pay each participant their bonus, in minor units of the study's currency (on
    Prolific: the bonus records are created, then paid); each participant's bonus total
    grows by it. Participants still at their batch are refused."""
    if not bonuses:
        raise PanelError("participants", _("Choose at least one participant."))
    amounts = {participant.pk: _bonus_amount(amount) for participant, amount in bonuses.items()}
    locked = _locked_participants(panel_study, list(bonuses))
    for participant in locked:
        if participant.state == ParticipantState.STARTED:
            raise PanelError(
                "not_finished",
                _("%(who)s has not finished their batch yet; nothing was changed.")
                % {"who": _who(participant)},
            )
    if _is_prolific(panel_study):
        study_id = _prolific_study_id(panel_study, locked)
        client = prolific_client()
        bulk_id = prolific_call(
            client.bonuses_create,
            study_id=study_id,
            bonuses={participant.pid: amounts[participant.pk] for participant in locked},
        )
        try:
            client.bonuses_pay(bulk_id)
        except prolific.ProlificError as error:
            raise PanelError(
                "prolific",
                _(
                    "Prolific created the bonuses but did not pay them (%(error)s). Nothing "
                    "was recorded here; pay them on Prolific's site, or try again."
                )
                % {"error": error},
            ) from None
    for participant in locked:
        before = participant.bonus_minor_units
        participant.bonus_minor_units = before + amounts[participant.pk]
        participant.save(update_fields=["bonus_minor_units"])
        audit.record(
            actor=actor,
            action=AuditAction.PANEL_BONUS,
            target=participant,
            target_label=_who(participant),
            study=panel_study.study,
            before={"bonus_minor_units": before},
            after={"bonus_minor_units": participant.bonus_minor_units},
            note=f"{amounts[participant.pk]} {panel_study.currency}",
        )
    return locked


def _locked_panel(panel_study: PanelStudy) -> PanelStudy:
    return (
        PanelStudy.objects.select_for_update(of=("self",))
        .select_related("study")
        .get(pk=panel_study.pk)
    )


def _study_action(panel: PanelStudy, actor, before: dict, after: dict, note: str) -> None:
    audit.record(
        actor=actor,
        action=AuditAction.PANEL_STUDY_ACTION,
        target=panel,
        target_label=panel.study.slug,
        study=panel.study,
        before=before,
        after=after,
        note=note,
    )


def _set_open(panel_study: PanelStudy, actor, *, is_open: bool) -> PanelStudy:
    panel = _locked_panel(panel_study)
    on_prolific = _is_prolific(panel)
    if on_prolific:
        client = prolific_client()
        call = client.study_start if is_open else client.study_pause
        prolific_call(
            call,
            _prolific_study_id(panel),
            by_hand=str(
                _(
                    "To open or pause it here only, run manage.py study_panel %(study)s "
                    "--open (or --pause), and do the same on Prolific's study page."
                )
                % {"study": panel.study.slug}
            ),
        )
    before = panel.is_open
    panel.is_open = is_open
    panel.save(update_fields=["is_open", "updated_at"])
    where = "on Prolific and here" if on_prolific else "here"
    _study_action(
        panel,
        actor,
        before={"is_open": before},
        after={"is_open": is_open},
        note=f"{'resumed' if is_open else 'paused'} {where}",
    )
    return panel


@transaction.atomic
def panel_pause(*, panel_study: PanelStudy, actor) -> PanelStudy:
    """Stop newcomers: the study is paused on Prolific (its API), then here. People
    already in go on with their batch."""
    return _set_open(panel_study, actor, is_open=False)


@transaction.atomic
def panel_resume(*, panel_study: PanelStudy, actor) -> PanelStudy:
    """Let newcomers in again: started again on Prolific, then opened here."""
    return _set_open(panel_study, actor, is_open=True)


@transaction.atomic
def panel_places_set(*, panel_study: PanelStudy, places, actor) -> PanelStudy:
    """How many people may hold a place at once (0 for no limit on another panel). On
    Prolific the study's total places change too: at least one, and Prolific itself
    refuses fewer than it has (its places only grow)."""
    if isinstance(places, bool) or not isinstance(places, int) or places < 0:
        raise PanelError("places", _("The number of places must be a whole number of 0 or more."))
    panel = _locked_panel(panel_study)
    on_prolific = _is_prolific(panel)
    if on_prolific:
        if places < 1:
            raise PanelError("places", _("A study on Prolific needs at least 1 place."))
        prolific_call(
            prolific_client().study_places_set,
            _prolific_study_id(panel),
            places,
            by_hand=str(
                _(
                    "To set them here only, run manage.py study_panel %(study)s --places "
                    "%(places)d, and set the same number on Prolific's study page."
                )
                % {"study": panel.study.slug, "places": places}
            ),
        )
    before = panel.places
    panel.places = places
    panel.save(update_fields=["places", "updated_at"])
    _study_action(
        panel,
        actor,
        before={"places": before},
        after={"places": places},
        note="places set on Prolific and here" if on_prolific else "places set here",
    )
    return panel
