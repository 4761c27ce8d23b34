"""The annotator's loop reads and writes a bounded number of times per request, whatever
the size of the study: a budget a change must not exceed without saying so here."""

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import AnswerExposure, Assignment
from annotation.selectors import metrics_cache_clear, ordering
from common import kept
from tests.builders import approved_annotator, late_scenario, lease_pair
from tests.helpers import complete_form

pytestmark = pytest.mark.django_db

# Measured with a warm cache (the page before it was rendered): the estimate of what is
# left is then cached, as it is for an annotator at work. The counts include the savepoint
# statements of the test's own transaction (two per nested atomic block).
# With Redis the session is read from the cache (chatanime_site.sessions); without it
# (`make test-fast`, `make run`) from the database, one query more.
SESSION_READ = 0 if settings.SESSION_ENGINE == "chatanime_site.sessions" else 1
# On PostgreSQL a submission writes the lease, the judgment, its ratings and flags, the
# item's count and its character's in one statement, and a lease counts the item's live
# leases and is written with the answers it shows in another (`services.judgments`,
# `services.leases`). SQLite runs them one by one, the submission inside a transaction of
# its own (two savepoint statements here): nine more.
ONE_BY_ONE = 0 if connection.vendor == "postgresql" else 9
# Before a new item is leased, the rating page asks `common.destinations` whether another
# app ends this person's work ("work-stop": a panel participant whose batch is over or
# whose time is up); for an annotator who is no panel participant that reads nothing.
NEXT_ITEM = 5 + SESSION_READ
# The lease and whether the annotator may rate are one read (`selectors.lease_at_work`).
RATING_PAGE = 4 + SESSION_READ
# The read of the lease also says whether the annotator holds another live lease, so
# the next item does not ask again.
SUBMIT_AND_NEXT = 8 + SESSION_READ + ONE_BY_ONE
# The same with every cache cold: metric definitions, item blocks, the staffing count, the
# study's progress and open work per character, the annotator's worklist and the estimate
# of what is left (a fresh process, or the first request after a minute).
# A new worklist reads its candidates' answers in one query, which then spares each lease
# taken from it the read of its item's answers: one more here, one fewer warm. The
# annotator's judgments per study are counted in a query of their own, by the plan and by
# the estimate (two more than counting them inside the studies' query, which joined every
# item of the study to them for each of its characters: 0.1 s of the database per plan).
SUBMIT_AND_NEXT_COLD = 28 + ONE_BY_ONE


@pytest.fixture
def at_work(client, alice):
    """Alice has rated one item and is looking at her second, like an annotator mid-study."""
    lease = lease_pair(alice)
    client.force_login(alice)
    client.get(f"/annotate/{lease.token}/")
    client.post(f"/annotate/{lease.token}/", complete_form(), headers={"HX-Request": "true"})
    return Assignment.objects.get(annotator=alice, state="active")


def test_next_item_redirect_stays_within_budget(client, at_work, django_assert_max_num_queries):
    with django_assert_max_num_queries(NEXT_ITEM):
        response = client.get("/annotate/")
    assert response.status_code == 302


def test_rating_page_stays_within_budget(client, at_work, django_assert_max_num_queries):
    with django_assert_max_num_queries(RATING_PAGE):
        response = client.get(f"/annotate/{at_work.token}/")
    assert response.status_code == 200 and at_work.token in response.content.decode()


def test_submit_and_next_stays_within_budget(client, at_work, django_assert_max_num_queries):
    with django_assert_max_num_queries(SUBMIT_AND_NEXT):
        response = client.post(
            f"/annotate/{at_work.token}/", complete_form(), headers={"HX-Request": "true"}
        )
    assert response.status_code == 200
    following = Assignment.objects.get(annotator=at_work.annotator, state="active")
    assert following.token in response.content.decode()


def test_submit_and_next_with_cold_caches_stays_within_budget(
    client, at_work, django_assert_max_num_queries
):
    cache.clear()
    kept.forget_all()
    with django_assert_max_num_queries(SUBMIT_AND_NEXT_COLD):
        response = client.post(
            f"/annotate/{at_work.token}/", complete_form(), headers={"HX-Request": "true"}
        )
    assert response.status_code == 200
    following = Assignment.objects.get(annotator=at_work.annotator, state="active")
    assert following.token in response.content.decode()


# Near the end of a character's work the next item is chosen with a look-ahead that reads
# the scenario's items, their live leases, who had them, what was seen of their answers,
# who else may rate them and the number of sources: these few queries more, only there.
# Counted with every per-process cache cold, which is when the look-ahead costs most.
LOOK_AHEAD = 8


def test_the_look_ahead_near_the_end_costs_a_few_queries_more(demo_dataset, luffy, monkeypatch):
    study, _bob, _only_for_bob, _open_to_all = late_scenario(luffy)
    alice = approved_annotator("alice-late@example.com", [luffy])
    services.assignment_next(user=alice, study=study)  # the staffing count, once a minute

    def next_item_queries() -> int:
        Assignment.objects.filter(annotator=alice).delete()
        AnswerExposure.objects.filter(annotator=alice).delete()
        # Both counts start cold: an item block kept from the first lease would spare the
        # second its reads whenever both happen to choose the same item.
        metrics_cache_clear()
        with CaptureQueriesContext(connection) as queries:
            assert services.assignment_next(user=alice, study=study) is not None
        return len(queries)

    with_look_ahead = next_item_queries()
    monkeypatch.setattr(ordering, "LOOKAHEAD_SHARE", 0)
    greedy = next_item_queries()

    assert with_look_ahead <= greedy + LOOK_AHEAD


@pytest.mark.integration
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepares on PostgreSQL only")
def test_the_loops_statements_are_kept_prepared_on_the_server(client, at_work):
    """The loop's statements, the same on every request, are parsed and planned once per
    connection (`settings.base.POSTGRESQL_OPTIONS`): after a few submissions the
    submission's statement and the read of the lease are prepared statements."""
    token = at_work.token
    for _ in range(settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"] + 1):
        response = client.post(
            f"/annotate/{token}/", complete_form(), headers={"HX-Request": "true"}
        )
        assert response.status_code == 200
        token = Assignment.objects.get(annotator=at_work.annotator, state="active").token
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]
    assert any(statement.startswith("WITH claimed AS") for statement in prepared), prepared
    assert any("FROM annotation_assignment a" in statement for statement in prepared)
