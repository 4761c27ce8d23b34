"""Every operation of the OpenAPI schema, fuzzed by schemathesis through the WSGI app:
researchers never get a server error; anonymous visitors and annotators get only
401/403 and nothing unblinded."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from annotation.simulation import simulate_study
from tests.builders import approved_annotator, make_study, researcher_named

# Deterministic (derandomized) and bounded. Researchers reach the views' code, where a
# hundred examples per operation are what it takes to hit inputs such as `?round=²`.
RESEARCHER_EXAMPLES = 100
REFUSED_EXAMPLES = 25


def fuzzing(max_examples):
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


@pytest.fixture
def api_world(demo_dataset, luffy, settings, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    # Throttling has its own test; here it would only turn late examples into 429s.
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"user": "100000/hour", "anon": "100000/hour"}
    )
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(
        overlap=1, rounds=(1, 2), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    simulate_study(study=study, annotators=2, seed=5)
    researcher = researcher_named("fuzz-researcher@example.com")
    annotator = approved_annotator("fuzz-annotator@example.com", [luffy])
    return {
        "researcher": Token.objects.create(user=researcher).key,
        "annotator": Token.objects.create(user=annotator).key,
    }


@pytest.fixture(autouse=True)
def _connection_kept_between_requests():
    """Like Django's test client: the WSGI app must not close the test's connection (and
    with it the test's transaction) at the start and end of each request."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def routed(path: str) -> bool:
    from urllib.parse import unquote

    from django.urls import Resolver404, resolve

    try:
        resolve(unquote(path))
    except Resolver404:
        return False
    return True


def api_schema():
    from django.core.wsgi import get_wsgi_application

    return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


def fuzz_every_operation(check, max_examples=REFUSED_EXAMPLES) -> list[str]:
    """Run `check(case)` on generated cases of every operation, one Hypothesis run per
    operation, so that a failure names its operation."""
    operations = [result.ok() for result in api_schema().get_all_operations()]
    for operation in operations:

        @fuzzing(max_examples)
        @given(case=operation.as_strategy())
        def run(case):
            check(case)

        run()
    return [operation.label for operation in operations]


@pytest.mark.django_db
def test_the_fuzzing_covers_every_endpoint(api_world, client):
    published = client.get("/api/schema/", {"format": "json"}).json()["paths"]

    labels = fuzz_every_operation(lambda case: None, max_examples=1)

    assert sorted(labels) == sorted(
        f"{method.upper()} {path}" for path, methods in published.items() for method in methods
    )
    assert "GET /api/v1/studies/{slug}/export/" in labels


@pytest.mark.django_db
def test_researchers_never_get_a_server_error(api_world):
    def check(case):
        response = case.call(headers={"Authorization": f"Token {api_world['researcher']}"})
        case.validate_response(response, checks=[not_a_server_error])
        assert response.status_code in (200, 400, 404), (case.path, response.status_code)

    fuzz_every_operation(check, max_examples=RESEARCHER_EXAMPLES)


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["anonymous", "annotator"])
def test_anonymous_visitors_and_annotators_get_only_refusals(api_world, who):
    headers = {"Authorization": f"Token {api_world['annotator']}"} if who == "annotator" else {}

    def check(case):
        response = case.call(headers=headers)
        refusals = (403,) if who == "annotator" else (401, 403)
        if response.status_code == 404:
            # A path no view answers (a slug with a slash, say) is refused by URL routing
            # before any view or data is reached.
            assert not routed(case.formatted_path), case.formatted_path
        else:
            assert response.status_code in refusals, (case.path, response.status_code)
        assert b"human" not in response.content and b"kumo" not in response.content

    fuzz_every_operation(check)
