"""Recording judgments and their ratings, and the checks that run with each one."""

import logging
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from .. import selectors
from ..assignment import POSITIONS
from ..models import (
    AssignmentState,
    HumanGuess,
    Item,
    ItemKind,
    Judgment,
    Preference,
    Rating,
)
from . import quality
from .errors import AnnotationError
from .leases import _active_assignment_for_update
from .text import plain_text

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Submission:
    """What the rating form sends, in display positions ('a', 'b', …) only."""

    ratings: dict[tuple[str, str], int]  # (position or "set", metric slug) -> 1..5
    preference: str = ""
    human_guess: str = ""
    comment: str = ""


def judgment_submit(
    *, user, token: str, submission: Submission, simulated: bool = False, refresh: bool = True
) -> Judgment:
    """Record a judgment and its ratings atomically, or raise AnnotationError and write
    nothing. A replay of an accepted submission raises `already_submitted`."""
    try:
        with transaction.atomic():
            judgment = _judgment_submit(
                user=user, token=token, submission=submission, simulated=simulated
            )
            quality.judgment_checks(judgment=judgment)
    except IntegrityError:
        # Two requests for the same lease raced; the database kept exactly one.
        raise AnnotationError(
            "already_submitted", _("You have already submitted this item.")
        ) from None
    if refresh:
        _results_refresh_later(judgment)
    return judgment


def _results_refresh_later(judgment: Judgment) -> None:
    """Derived results are recomputed by a worker once the rating is safely stored. A
    burst of submissions enqueues one refresh (debounced through the cache); a dead
    broker delays results and loses nothing: the beat schedule catches up."""
    study_id = judgment.item.study_id

    def enqueue():
        from django.core.cache import cache

        from ..tasks import REFRESH_DEBOUNCE_SECONDS, study_results_refresh

        try:
            if cache.add(f"results-refresh-queued:{study_id}", 1, timeout=REFRESH_DEBOUNCE_SECONDS):
                study_results_refresh.apply_async((study_id,), countdown=REFRESH_DEBOUNCE_SECONDS)
        except Exception:  # the broker or cache is down; the rating is already saved
            logger.warning(
                "could not enqueue the results refresh of study %s", study_id, exc_info=True
            )

    transaction.on_commit(enqueue, robust=True)


def _judgment_submit(*, user, token: str, submission: Submission, simulated: bool) -> Judgment:
    assignment = _active_assignment_for_update(user=user, token=token)
    item = assignment.item
    slot_answers = dict(item.slots.values_list("slot", "answer_id"))
    position_answer = {
        POSITIONS[i]: slot_answers[slot] for i, slot in enumerate(assignment.display_order)
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

    now = timezone.now()
    judgment = Judgment.objects.create(
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
    metric_ids = {m.slug: m.pk for m in metrics}
    Rating.objects.bulk_create(
        Rating(
            judgment=judgment,
            answer_id=None if position == "set" else position_answer[position],
            metric_id=metric_ids[slug],
            value=value,
        )
        for (position, slug), value in submission.ratings.items()
    )
    assignment.state = AssignmentState.SUBMITTED
    assignment.save(update_fields=["state"])
    Item.objects.filter(pk=item.pk).update(judgment_count=F("judgment_count") + 1)
    return judgment


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
