"""Recording judgments and their ratings, and the checks that run with each one."""

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import selectors, sql
from ..models import (
    Assignment,
    AssignmentState,
    HumanGuess,
    ItemKind,
    Judgment,
    Preference,
    StudyStatus,
)
from ..pairing import POSITIONS
from . import quality
from .errors import AnnotationError
from .leases import active_assignment_for_update
from .refreshes import study_results_refresh_later
from .text import plain_text


@dataclass(frozen=True)
class Submission:
    """What the rating form sends, in display positions ('a', 'b', …) only."""

    ratings: dict[tuple[str, str], int]  # (position or "set", metric slug) -> 1..5
    preference: str = ""
    human_guess: str = ""
    comment: str = ""


def judgment_submit(
    *,
    user,
    token: str,
    submission: Submission,
    simulated: bool = False,
    refresh: bool = True,
    assignment: Assignment | None = None,
) -> Judgment:
    """Record a judgment and its ratings atomically, or raise AnnotationError and write
    nothing. A replay of an accepted submission raises `already_submitted`.
    `assignment`, the lease behind `token` as the caller already read it (with its item
    and study), spares reading it again; whether it is still live is decided here."""
    if assignment is not None and (assignment.token != token or assignment.annotator_id != user.pk):
        assignment = None
    try:
        with transaction.atomic():
            judgment, ratings = _judgment_submit(
                user=user,
                token=token,
                submission=submission,
                simulated=simulated,
                assignment=assignment,
            )
            quality.judgment_checks(judgment=judgment, ratings=ratings)
    except IntegrityError:
        # Two requests for the same lease raced; the database kept exactly one.
        raise AnnotationError(
            "already_submitted", _("You have already submitted this item.")
        ) from None
    if refresh:
        # Derived results are recomputed by a worker once the rating is safely stored.
        study_results_refresh_later(study_id=judgment.item.study_id)
    return judgment


def _claim(*, user, token: str, assignment: Assignment | None, now) -> Assignment:
    """Lock the live lease behind `token` and mark it submitted (the transaction undoes
    that if the submission is refused), or raise AnnotationError saying why it is not
    live. One conditional UPDATE both checks and locks: a concurrent second submission
    waits for it, then finds the lease no longer active."""
    if assignment is None:
        assignment = active_assignment_for_update(user=user, token=token)
        assignment.state = AssignmentState.SUBMITTED
        assignment.save(update_fields=["state"])
        return assignment
    if assignment.item.study.status != StudyStatus.OPEN:
        active_assignment_for_update(user=user, token=token)  # raises the reason
    # Only the lease's own columns in the condition: PostgreSQL re-checks them on the row
    # a concurrent submission just changed, so exactly one of two racing requests wins.
    # Written out: run on every judgment (see `annotation.sql`).
    claimed = sql.row_count(
        "UPDATE annotation_assignment SET state = %s"
        " WHERE id = %s AND state = %s AND expires_at > %s",
        [
            AssignmentState.SUBMITTED.value,
            assignment.pk,
            AssignmentState.ACTIVE.value,
            sql.db_moment(now),
        ],
    )
    if not claimed:
        active_assignment_for_update(user=user, token=token)  # raises the reason
        raise AnnotationError("not_yours", _("This item is not assigned to you."))
    return assignment


def _judgment_submit(
    *, user, token: str, submission: Submission, simulated: bool, assignment: Assignment | None
) -> tuple[Judgment, dict]:
    now = timezone.now()
    assignment = _claim(user=user, token=token, assignment=assignment, now=now)
    item = assignment.item
    slots = selectors.item_block(item).slots
    position_answer = {
        POSITIONS[i]: slots[slot].pk for i, slot in enumerate(assignment.display_order)
    }
    if item.kind == ItemKind.PAIR:
        metrics = selectors.metrics_for(diversity=False)
        expected = {(position, m.slug) for position in position_answer for m in metrics}
    else:
        metrics = selectors.metrics_for(diversity=True)
        expected = {("set", m.slug) for m in metrics}
    if not expected:
        # Without metrics the form would be empty and an empty judgment would count.
        raise AnnotationError(
            "no_metrics", _("This study has no metrics to rate. Please tell the study team.")
        )
    _check_ratings(submission.ratings, expected)

    preferred, is_tie = None, False
    guess, guess_asked = None, False
    if item.kind == ItemKind.PAIR:
        if submission.preference not in Preference.values:
            raise AnnotationError("preference", _("Choose which answer you prefer, or a tie."))
        is_tie = submission.preference == Preference.TIE
        preferred = None if is_tie else position_answer[submission.preference]
        if item.study.ask_human_guess:
            guess_asked = True
            if submission.human_guess not in HumanGuess.values:
                raise AnnotationError(
                    "human_guess", _("Say which answer you think a fan wrote, or 'not sure'.")
                )
            guess = position_answer.get(submission.human_guess)

    judgment = Judgment(
        item=item,
        annotator=user,
        assignment=assignment,
        submitted_at=now,
        seconds_on_task=(now - assignment.served_at).total_seconds(),
        preferred_answer_id=preferred,
        is_tie=is_tie,
        human_guess_id=guess,
        human_guess_asked=guess_asked,
        comment=plain_text(submission.comment, 2000),
        simulated=simulated,
    )
    sql.insert(judgment)  # written out: on every judgment (see `annotation.sql`)
    metric_ids = {m.slug: m.pk for m in metrics}
    ratings = {
        (None if position == "set" else position_answer[position], metric_ids[slug]): value
        for (position, slug), value in submission.ratings.items()
    }
    # Written out: some twenty rows on every judgment (see `annotation.sql`); the table's
    # constraints (one rating per metric and answer, 1 to 5) still hold them.
    sql.row_count(
        "INSERT INTO annotation_rating (judgment_id, answer_id, metric_id, value) VALUES "
        + ", ".join(["(%s, %s, %s, %s)"] * len(ratings)),
        [
            value
            for (answer_id, metric_id), rating in ratings.items()
            for value in (judgment.pk, answer_id, metric_id, rating)
        ],
    )
    sql.row_count(
        "UPDATE annotation_item SET judgment_count = judgment_count + 1 WHERE id = %s", [item.pk]
    )
    return judgment, ratings


def _check_ratings(ratings: dict[tuple[str, str], int], expected: set[tuple[str, str]]) -> None:
    unknown = set(ratings) - expected
    if unknown:
        raise AnnotationError(
            "unknown_rating", _("The form contained ratings this item does not have.")
        )
    if set(ratings) != expected:
        raise AnnotationError("missing_rating", _("Please rate every metric for every answer."))
    for value in ratings.values():
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
            raise AnnotationError("out_of_range", _("Ratings must be whole numbers from 1 to 5."))
