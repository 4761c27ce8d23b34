"""Where an annotator stands on the way to rating, and the staff's screening queue."""

from django.db.models import Count

from .. import sql
from ..models import (
    ProfileStatus,
    Qualification,
    QualificationStatus,
)


class Step:
    CONSENT = "consent"
    CHARACTERS = "characters"
    QUIZ = "quiz"
    WAITING = "waiting"
    READY = "ready"
    REJECTED = "rejected"
    SUSPENDED = "suspended"


def annotator_step(user) -> str:
    """The next thing this person has to do before (or instead of) rating."""
    # Asked on every annotator request: the profile and its qualifications' statuses in
    # one written statement (one row per qualification, or one row with None without any).
    rows = sql.rows(
        "SELECT p.consented_at IS NOT NULL, p.status, q.status"
        " FROM annotation_annotatorprofile p"
        " LEFT JOIN annotation_qualification q ON q.profile_id = p.id"
        " WHERE p.user_id = %s",
        [user.pk],
    )
    if not rows or not rows[0][0]:
        return Step.CONSENT
    status = rows[0][1]
    if status == ProfileStatus.SUSPENDED:
        return Step.SUSPENDED
    statuses = {row[2] for row in rows if row[2] is not None}
    if status == ProfileStatus.APPROVED and QualificationStatus.APPROVED in statuses:
        return Step.READY
    if not statuses:
        return Step.CHARACTERS
    if statuses & {QualificationStatus.CLAIMED, QualificationStatus.FAILED}:
        return Step.QUIZ
    if QualificationStatus.PASSED in statuses:
        return Step.WAITING
    return Step.REJECTED


def ready_condition(user_id_column: str) -> str:
    """`annotator_step(user) == Step.READY` as a condition of a written statement over
    the user whose id is in `user_id_column`: consented, approved, and approved for at
    least one character. The rating page and the submission ask it inside their one read
    of the lease (`annotating.lease_at_work`) instead of in a statement of their own."""
    return (
        "EXISTS (SELECT 1 FROM annotation_annotatorprofile p"
        " JOIN annotation_qualification q ON q.profile_id = p.id"
        f" WHERE p.user_id = {user_id_column} AND p.consented_at IS NOT NULL"
        f" AND p.status = {sql.literal(ProfileStatus.APPROVED)}"
        f" AND q.status = {sql.literal(QualificationStatus.APPROVED)})"
    )


def qualifications_of(user) -> list[Qualification]:
    return list(
        Qualification.objects.filter(profile__user=user)
        .select_related("character")
        .order_by("character_id")
    )


def pending_quizzes(user) -> list[Qualification]:
    return [
        q
        for q in qualifications_of(user)
        if q.status in (QualificationStatus.CLAIMED, QualificationStatus.FAILED)
    ]


def _screened_by_people():
    # simulate_study's annotators are qualified by the simulation, not screened: counted
    # here they made the queue's figures disagree with the annotators page, which omits them.
    return Qualification.objects.filter(profile__simulated=False)


def screening_queue(*, status: str = QualificationStatus.PASSED, character_id=None):
    """Applications in one state (by default: quiz passed, awaiting review), oldest first."""
    queue = (
        _screened_by_people()
        .filter(status=status)
        .select_related("profile__user", "character", "reviewed_by")
    )
    if character_id:
        queue = queue.filter(character_id=character_id)
    return queue.order_by("profile__created_at", "pk")


def queue_counts() -> dict[str, int]:
    return dict(
        _screened_by_people().values_list("status").annotate(n=Count("pk")).order_by("status")
    )
