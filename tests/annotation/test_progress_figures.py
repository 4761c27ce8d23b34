"""The progress line of the rating page, read by written statements (`annotation.sql`) on
whichever database the tests run: judgments in open studies, today's judgments, live
leases among what is left, and the break rule of the study last rated."""

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation import selectors, services
from annotation.models import Judgment, StudyStatus
from annotation.selectors import is_break_due
from tests.builders import lease_pair, make_study
from tests.helpers import full_ratings

pytestmark = pytest.mark.django_db


def rate(user, n: int) -> list[Judgment]:
    judgments = []
    for _ in range(n):
        lease = lease_pair(user)
        judgments.append(
            services.judgment_submit(
                user=user,
                token=lease.token,
                submission=services.Submission(ratings=full_ratings(), preference="tie"),
            )
        )
    return judgments


def test_the_figures_count_open_studies_today_and_live_leases(alice, study):
    yesterday, *_today = rate(alice, 3)
    Judgment.objects.filter(pk=yesterday.pk).update(
        submitted_at=timezone.now() - timedelta(days=1, hours=1)
    )

    progress = selectors.progress_of(alice)
    assert (progress.done, progress.today, progress.break_due) == (3, 2, False)

    # A live lease is part of what is left, moved there from the estimate of what she may
    # still take: what is left, and so the total, stays put.
    lease_pair(alice)
    assert selectors.progress_of(alice).remaining == progress.remaining

    study.status = StudyStatus.CLOSED
    study.save()
    assert selectors.progress_of(alice).done == 0


def test_a_break_is_due_by_the_rule_of_the_study_last_rated(alice, study):
    study.break_every_items = 2
    study.save()
    rate(alice, 1)
    assert not selectors.progress_of(alice).break_due

    rate(alice, 1)
    assert selectors.progress_of(alice).break_due


def test_a_long_sitting_is_read_from_the_stored_moments(alice, study, monkeypatch):
    # At midday: run just after midnight, the sitting's first judgments would be
    # yesterday's, which the break rule rightly leaves out.
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: now)
    first, second = rate(alice, 2)
    # Rated 50 and 5 minutes ago: two sittings, the last one short.
    Judgment.objects.filter(pk=first.pk).update(submitted_at=now - timedelta(minutes=50))
    Judgment.objects.filter(pk=second.pk).update(submitted_at=now - timedelta(minutes=5))
    assert not selectors.progress_of(alice).break_due

    # Rated 50, 41, 32, 23, 14 and 5 minutes ago: one sitting of 45 minutes and more.
    more = rate(alice, 4)
    for n, judgment in enumerate([first, *more, second]):
        Judgment.objects.filter(pk=judgment.pk).update(
            submitted_at=now - timedelta(minutes=50 - 9 * n)
        )
    assert selectors.progress_of(alice).break_due


def at_moments(judgments: list[Judgment], moments) -> None:
    for judgment, moment in zip(judgments, moments, strict=True):
        Judgment.objects.filter(pk=judgment.pk).update(submitted_at=moment)


@pytest.mark.parametrize(
    ("gap", "due"),
    [(timedelta(minutes=10), True), (timedelta(minutes=10, milliseconds=1), False)],
)
def test_a_gap_of_ten_minutes_exactly_keeps_the_sitting(alice, study, monkeypatch, gap, due):
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: now)
    study.break_every_minutes = 20
    study.save()
    first = now - 2 * gap - timedelta(seconds=1)
    at_moments(rate(alice, 3), [first, first + gap, first + 2 * gap])
    # The sitting lasts just over 20 minutes if the gaps keep it, under 1 s if they end it.
    assert selectors.progress_of(alice).break_due is due


@pytest.mark.parametrize("seed", range(24))
def test_the_statement_reads_the_sitting_as_the_rule_does(alice, study, monkeypatch, seed):
    """The progress line's statement summarizes today's judgments in the database; the
    same judgments, read one by one and given to the rule, must say the same."""
    rng = random.Random(seed)
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: now)
    study.break_every_items = rng.choice([0, 2, 3])
    study.break_every_minutes = rng.choice([0, 10, 20, 30])
    study.save()
    steps = [timedelta(0), timedelta(seconds=1), timedelta(minutes=9)]
    steps += [
        timedelta(minutes=10),
        timedelta(minutes=10, milliseconds=1),
        timedelta(hours=2),
        timedelta(hours=13),
    ]
    judgments = rate(alice, rng.randint(1, 6))
    moment = now - timedelta(minutes=rng.choice([0, 5, 11]))
    moments = []
    for _ in judgments:
        moments.append(moment)
        moment -= rng.choice(steps)  # some land yesterday, before midnight
    at_moments(judgments, moments)

    today = [
        (submitted_at, study.break_every_items, study.break_every_minutes)
        for submitted_at in sorted(moments)
        if submitted_at >= now.replace(hour=0)
    ]
    progress = selectors.progress_of(alice)
    assert (progress.today, progress.break_due) == (len(today), is_break_due(today, now))


def test_the_rule_is_the_one_of_the_study_rated_last(alice, study):
    study.break_every_items = 2
    study.save()
    relaxed = make_study()
    relaxed.break_every_items = relaxed.break_every_minutes = 0
    relaxed.save()

    def rate_in(chosen):
        lease = services.assignment_next(user=alice, study=chosen)
        services.judgment_submit(
            user=alice,
            token=lease.token,
            submission=services.Submission(ratings=full_ratings(), preference="tie"),
        )

    rate_in(study)
    rate_in(relaxed)
    assert not selectors.progress_of(alice).break_due  # two today, but no rule where last
    rate_in(relaxed)
    rate_in(study)
    assert selectors.progress_of(alice).break_due  # four today, every two where last


def test_the_total_falls_by_one_when_an_item_is_skipped_and_stays_when_one_is_rated(alice, study):
    """The rating page says a skipped item will not come back: the total it shows falls by
    one at once, not when the estimate is next made, and rating one leaves it as it was."""
    from django.core.cache import cache

    from annotation.selectors.progress import items_left_forget

    rate(alice, 1)
    before = selectors.progress_of(alice)

    lease = lease_pair(alice)
    services.assignment_skip(user=alice, token=lease.token, reason="too_hard")
    services.assignment_next(user=alice)
    skipped = selectors.progress_of(alice)
    assert skipped.total == before.total - 1
    rate(alice, 1)
    assert selectors.progress_of(alice).total == skipped.total

    # The same figures as an estimate made afresh gives.
    cache.clear()
    items_left_forget()
    assert selectors.progress_of(alice).total == skipped.total


def test_a_paused_study_keeps_its_figures_and_the_page_says_it_is_paused(client, alice, study):
    """Staff pause a study while an annotator rates it: what they did and what is left
    stay on the line (it read "Done 0 of 56" while the estimate was kept), and the page
    says why nothing comes, until the study reopens."""
    from django.core.cache import cache

    from annotation.selectors.progress import items_left_forget

    rate(alice, 3)
    lease_pair(alice)  # the item on their screen when the study is paused
    before = selectors.progress_of(alice)
    assert (before.done, before.paused) == (3, False)

    services.study_set_status(study=study, status=StudyStatus.PAUSED)
    paused = selectors.progress_of(alice)
    assert (paused.done, paused.total, paused.today, paused.paused) == (3, before.total, 3, True)
    cache.clear()
    items_left_forget()  # an estimate made afresh, during the pause, says the same
    assert selectors.progress_of(alice).total == before.total

    client.force_login(alice)
    page = client.get("/annotate/").content.decode()
    assert f"Done 3 of {before.total} · today 3" in page
    assert "The study team has paused a study you were rating." in page

    services.study_set_status(study=study, status=StudyStatus.OPEN)
    reopened = selectors.progress_of(alice)
    assert (reopened.done, reopened.total, reopened.paused) == (3, before.total, False)


def _rows_read_for_paused_studies(statement: str, params) -> int:
    """The rows PostgreSQL reads to answer the statement's question about paused studies
    (the subquery over `annotation_study ps`), as EXPLAIN ANALYZE counts them."""
    import json

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, params)
        (plan,) = cursor.fetchone()
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def nodes(node):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    def asks_of_paused(node) -> bool:
        return any(n.get("Alias") == "ps" for n in nodes(node))

    subplans = [n for n in nodes(plan[0]["Plan"]) if "Subplan Name" in n and asks_of_paused(n)]
    innermost = min(subplans, key=lambda n: len(list(nodes(n))))
    return sum(
        n["Actual Rows"] * n["Actual Loops"] for n in nodes(innermost) if "Relation Name" in n
    )


@pytest.mark.integration
@pytest.mark.skipif(connection.vendor != "postgresql", reason="counts what PostgreSQL reads")
def test_the_paused_study_question_reads_no_items_of_a_study_never_leased_in(alice, study):
    """Asked on every rating page: whether the annotator leased in a paused study reads a
    handful of rows, however many items the paused study and however many leases she
    has (asked of her leases joined to the items, it read every item of the study)."""
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Assignment, AssignmentState, Item

    paused = make_study()
    services.study_set_status(study=paused, status=StudyStatus.PAUSED)
    template = Item.objects.filter(study=paused).first()
    Item.objects.bulk_create(
        Item(
            study=paused,
            kind=template.kind,
            round=template.round,
            character=template.character,
            scenario=template.scenario,
        )
        for _ in range(3000)
    )
    # Her long history elsewhere: submitted leases on items of the open study.
    elsewhere = Item.objects.filter(study=study).first()
    own = Item.objects.bulk_create(
        Item(
            study=study,
            kind=elsewhere.kind,
            round=elsewhere.round,
            character=elsewhere.character,
            scenario=elsewhere.scenario,
        )
        for _ in range(3000)
    )
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(
            item=item,
            annotator=alice,
            state=AssignmentState.SUBMITTED,
            display_order=[0, 1],
            served_at=now,
            expires_at=now,
        )
        for item in own
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")

    with CaptureQueriesContext(connection) as queries:
        assert selectors.progress_of(alice).paused is False
    (statement,) = [q["sql"] for q in queries if "annotation_study ps" in q["sql"]]
    # The captured text has its values in place: EXPLAIN it as it ran.
    assert _rows_read_for_paused_studies(statement, None) < 50
