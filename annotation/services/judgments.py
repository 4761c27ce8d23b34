"""Recording judgments and their ratings, and the checks that run with each one."""

from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from common.text import plain_text

from .. import selectors, sql
from ..models import (
    Assignment,
    AssignmentState,
    HumanGuess,
    ItemKind,
    Judgment,
    Preference,
    Rating,
)
from ..pairing import POSITIONS
from . import quality
from .errors import AnnotationError
from .leases import assignment_check_active, lease_check
from .refreshes import study_results_refresh_later

# The longest comment, in characters as a person counts them (code points). A longer one
# is refused, never cut: the annotator would not know their comment lost its end.
COMMENT_MAX_CHARS = 2000


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
    if assignment is None or assignment.token != token or assignment.annotator_id != user.pk:
        assignment = selectors.own_lease(user, token)
        if assignment is None:
            raise AnnotationError("not_yours", _("This item is not assigned to you."))
    # A lease that is no longer live, as read, says so before the form is checked: it
    # cannot be saved anyway. Whether it is still live when written is decided below.
    lease_check(assignment)
    now = timezone.now()
    judgment, ratings = _judgment_of(user, assignment, submission, now, simulated=simulated)
    try:
        if connection.vendor == "postgresql" and not assignment.item.is_gold:
            recorded = _record_in_one_statement(judgment, ratings, now)
        else:
            recorded = _record(judgment, ratings, now)
    except IntegrityError:
        # Two requests for the same lease raced; the database kept exactly one.
        raise AnnotationError(
            "already_submitted", _("You have already submitted this item.")
        ) from None
    if not recorded:
        # The lease was not live when written: submitted, skipped or expired meanwhile.
        assignment_check_active(user=user, token=token)  # raises the reason
        raise AnnotationError("not_yours", _("This item is not assigned to you."))
    if refresh:
        # Derived results are recomputed by a worker once the rating is safely stored.
        study_results_refresh_later(study_id=judgment.item.study_id)
    return judgment


# Only the lease's own columns in the condition: PostgreSQL re-checks them on the row a
# concurrent submission just changed, so exactly one of two racing requests wins.
_CLAIM = (
    f"UPDATE annotation_assignment SET state = {sql.literal(AssignmentState.SUBMITTED)}"
    f" WHERE id = %s AND state = {sql.literal(AssignmentState.ACTIVE)} AND expires_at > %s"
)


def _claim_params(assignment: Assignment, now) -> list:
    return [assignment.pk, sql.db_moment(now)]


# The character's progress in the study (`CharacterProgress`), gold aside. Whether the
# item is gold is read from the row just counted, not from the copy the request read:
# staff may have marked it since, and the recount that follows their change would then
# not undo a count it did not see.
_PROGRESSED = (
    "UPDATE annotation_characterprogress SET judgments = judgments + 1"
    " WHERE study_id = %s AND character_id = %s"
)


def _progressed_params(judgment: Judgment) -> list:
    return [judgment.study_id, judgment.item.character_id]


def _record_in_one_statement(judgment: Judgment, ratings: dict, now) -> bool:
    """PostgreSQL: mark the lease submitted, write the judgment, its ratings and its
    flags, and count it on the item, all in one statement (data-modifying `WITH`
    queries): a statement is a transaction of its own, and one statement instead of
    five, each a round trip with its own planning, is the largest saving on the loop's
    every judgment. Nothing is written unless the lease was live; False then. Gold items
    take `_record`: their check reads the item's expectations first."""
    flags = quality.judgment_flags(judgment, ratings)
    judged_sql, judged_params = sql.insert_from("claimed", [judgment])
    rated_sql, rated_params = sql.insert_columns_from(
        Rating,
        "judgment",
        {
            "answer_id": [answer_id for answer_id, _metric_id in ratings],
            "metric_id": [metric_id for _answer_id, metric_id in ratings],
            "value": list(ratings.values()),
        },
        taken={"judgment_id": "judgment.id"},
    )
    queries = [
        (f"claimed AS ({_CLAIM} RETURNING id)", _claim_params(judgment.assignment, now)),
        (f"judgment AS ({judged_sql} RETURNING id)", judged_params),
        (f"rated AS ({rated_sql})", rated_params),
        (
            "counted AS (UPDATE annotation_item SET judgment_count = judgment_count + 1"
            " WHERE id = %s AND EXISTS (SELECT 1 FROM claimed) RETURNING is_gold)",
            [judgment.item_id],
        ),
        (
            f"progressed AS ({_PROGRESSED} AND EXISTS (SELECT 1 FROM counted WHERE NOT is_gold))",
            _progressed_params(judgment),
        ),
    ]
    if flags:
        flagged_sql, flagged_params = sql.insert_from(
            "judgment", flags, taken={"judgment_id": "judgment.id"}
        )
        queries.append((f"flagged AS ({flagged_sql})", flagged_params))
    row = sql.first_row(
        "WITH " + ", ".join(query for query, _params in queries) + " SELECT id FROM judgment",
        [param for _query, params in queries for param in params],
    )
    if row is None:
        return False
    sql.saved(judgment, row[0])
    judgment.assignment.state = AssignmentState.SUBMITTED
    if flags:
        # The pause is a transaction of its own, on the annotator's profile, after the
        # flags: should it fail, the flags are stored and the next one pauses them.
        quality.pause_if_flagged(annotator=judgment.annotator, study=judgment.item.study)
    return True


@transaction.atomic
def _record(judgment: Judgment, ratings: dict, now) -> bool:
    """The judgment, its ratings, the item's count and the checks, in one transaction of
    several statements (SQLite, and gold items). False, writing nothing, if the lease
    was not live."""
    # Written out: run on every judgment (see `annotation.sql`).
    if not sql.row_count(_CLAIM, _claim_params(judgment.assignment, now)):
        return False
    judgment.assignment.state = AssignmentState.SUBMITTED
    sql.insert(judgment)
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
    (is_gold,) = sql.one_row(
        "UPDATE annotation_item SET judgment_count = judgment_count + 1 WHERE id = %s"
        " RETURNING is_gold",
        [judgment.item_id],
    )
    if not is_gold:
        sql.row_count(_PROGRESSED, _progressed_params(judgment))
    quality.judgment_checks(judgment=judgment, ratings=ratings)
    return True


def _judgment_of(
    user, assignment: Assignment, submission: Submission, now, *, simulated: bool
) -> tuple[Judgment, dict]:
    """The judgment the form makes, unsaved, and its ratings keyed by (answer id or None,
    metric id); AnnotationError if the form is incomplete or out of range."""
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
    # Counted as the page counts it: a browser sends each line break as two characters.
    comment = plain_text(submission.comment).replace("\r\n", "\n")
    if len(comment) > COMMENT_MAX_CHARS:
        raise AnnotationError(
            "comment_too_long",
            _(
                "Your comment may have at most %(max)d characters; it has %(n)d."
                " Nothing was saved: shorten it and send again."
            )
            % {"max": COMMENT_MAX_CHARS, "n": len(comment)},
        )

    judgment = Judgment(
        item=item,
        study_id=item.study_id,
        annotator=user,
        assignment=assignment,
        submitted_at=now,
        seconds_on_task=(now - assignment.served_at).total_seconds(),
        preferred_answer_id=preferred,
        is_tie=is_tie,
        human_guess_id=guess,
        human_guess_asked=guess_asked,
        comment=comment,
        simulated=simulated,
    )
    metric_ids = {m.slug: m.pk for m in metrics}
    ratings = {
        (None if position == "set" else position_answer[position], metric_ids[slug]): value
        for (position, slug), value in submission.ratings.items()
    }
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
