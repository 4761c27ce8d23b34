"""Every URL of every app, for every kind of visitor: who gets through the door.

Each URL the site serves has a role here; a URL added without one fails the first test,
so no page is ever published without somebody deciding who may see it. The objects the
URLs name do not exist: a visitor let in meets the view's own 404, a visitor kept out never
gets that far. What each page then shows is the business of the app's own tests
(test_permission_matrix, test_staff_permissions, test_collection_staff, test_writing)."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.builders import (
    UserFactory,
    approved_annotator,
    make_writer,
    researcher_named,
    study_manager_named,
)

pytestmark = pytest.mark.django_db

PUBLIC, SIGNED_IN, RESEARCHER, MANAGER, ADMIN = (
    "public",
    "signed in",
    "researcher",
    "study manager",
    "admin",
)
# Who may do what a role may: each role includes those before it.
ROLES_WITH = {
    PUBLIC: {"anonymous", "annotator", "writer", "researcher", "manager", "admin"},
    SIGNED_IN: {"annotator", "writer", "researcher", "manager", "admin"},
    RESEARCHER: {"researcher", "manager", "admin"},
    MANAGER: {"manager", "admin"},
    ADMIN: {"admin"},
}

ROLE_OF = {
    "home": PUBLIC,
    "health": PUBLIC,
    "favicon": PUBLIC,
    # Annotators: what an account may do is then decided by its screening.
    "annotate": SIGNED_IN,
    "annotate-item": SIGNED_IN,
    "annotate-skip": SIGNED_IN,
    "annotate-keep": SIGNED_IN,
    "screening": SIGNED_IN,
    "screening-consent": SIGNED_IN,
    "screening-characters": SIGNED_IN,
    "screening-quiz": SIGNED_IN,
    # Writers: the same accounts, approved per character to write.
    "write": SIGNED_IN,
    "write-apply": SIGNED_IN,
    "write-next": SIGNED_IN,
    "write-task": SIGNED_IN,
    "write-followup-retry": SIGNED_IN,
    "write-user": SIGNED_IN,
    "write-user-submit": SIGNED_IN,
    # Panel participants: the panel's link is the door; the start page is their own.
    "panel-join": PUBLIC,
    "panel-start": SIGNED_IN,
    "panel-done": SIGNED_IN,
    "panel-check": SIGNED_IN,
    "panel-leave": SIGNED_IN,
    # Prolific's webhook: anyone may knock; its signature, not a session, decides.
    "panel-prolific-webhook": PUBLIC,
    # Researchers: results, exports, the API.
    "results": RESEARCHER,
    "results-study": RESEARCHER,
    "results-methods": RESEARCHER,
    "results-exports": RESEARCHER,
    "export-download": RESEARCHER,
    "export-manifest": RESEARCHER,
    "api-root": RESEARCHER,
    "source-list": RESEARCHER,
    "source-detail": RESEARCHER,
    "character-list": RESEARCHER,
    "character-detail": RESEARCHER,
    "scenario-list": RESEARCHER,
    "scenario-detail": RESEARCHER,
    "answer-list": RESEARCHER,
    "answer-detail": RESEARCHER,
    "study-list": RESEARCHER,
    "study-detail": RESEARCHER,
    "study-export": RESEARCHER,
    "study-results": RESEARCHER,
    "item-list": RESEARCHER,
    "item-detail": RESEARCHER,
    "judgment-list": RESEARCHER,
    "judgment-detail": RESEARCHER,
    "rating-list": RESEARCHER,
    "rating-detail": RESEARCHER,
    "judgerun-list": RESEARCHER,
    "judgerun-detail": RESEARCHER,
    "api-schema": PUBLIC,
    "api-docs": PUBLIC,
    # Study managers: screening, annotators, studies, writing runs and review.
    "results-refresh": MANAGER,
    "staff-studies": MANAGER,
    "staff-screening": MANAGER,
    "staff-screening-review": MANAGER,
    "staff-applicant": MANAGER,
    "staff-annotators": MANAGER,
    "staff-annotator": MANAGER,
    "staff-annotator-suspension": MANAGER,
    "staff-flag-resolve": MANAGER,
    "staff-study": MANAGER,
    "staff-study-caps": MANAGER,
    "staff-study-status": MANAGER,
    "staff-judgment-decide": MANAGER,
    "staff-flags-decide": MANAGER,
    "staff-assignment": MANAGER,
    "staff-membership-add": MANAGER,
    "staff-membership-change": MANAGER,
    "write-staff": MANAGER,
    "write-staff-application": MANAGER,
    "write-staff-run-create": MANAGER,
    "write-staff-run": MANAGER,
    "write-staff-task": MANAGER,
    "staff-audit": MANAGER,
    # The panel's dashboard; its payment file asks further for the permission to pay.
    "staff-panel": MANAGER,
    "staff-panel-payments": MANAGER,
    "staff-panel-approve": MANAGER,
    "staff-panel-decide": MANAGER,
    "staff-panel-openness": MANAGER,
    "staff-panel-places": MANAGER,
    "staff-panel-check-void": MANAGER,
    # Admins: model endpoints with their keys' names.
    "collection-runs": ADMIN,
    # A judge run spends money on someone's API key, as a collection run does.
    "judge-runs": ADMIN,
    "judge-run-control": ADMIN,
    "collection-run": ADMIN,
    "collection-run-control": ADMIN,
    "collection-answer-review": ADMIN,
}
# Served by Django's admin and allauth, which guard their own pages.
OTHERS_GUARD = ("admin/", "accounts/", "i18n/")
MISSING = {"int": 999_999, "str": "no-such-token", "slug": "no-such-study"}


def served_urls() -> dict[str, str]:
    """URL name -> a path of it naming objects that do not exist."""
    found: dict[str, str] = {}

    def walk(patterns, prefix, namespace):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if route.startswith(OTHERS_GUARD):
                continue
            if isinstance(pattern, URLResolver):
                inner = pattern.namespace or namespace
                if pattern.namespace and namespace:
                    inner = f"{namespace}:{pattern.namespace}"
                walk(pattern.url_patterns, route, inner)
            elif isinstance(pattern, URLPattern) and pattern.name:
                name = f"{namespace}:{pattern.name}" if namespace else pattern.name
                if name in found or "format" in pattern.pattern.regex.groupindex:
                    continue  # the API's `.json` twins go through the same view
                found[name] = reverse(name, kwargs=_missing_objects(pattern))

    walk(get_resolver().url_patterns, "", None)
    return found


def _missing_objects(pattern: URLPattern) -> dict[str, object]:
    converters = getattr(pattern.pattern, "converters", {})
    kwargs = {}
    for name in pattern.pattern.regex.groupindex:
        converter = type(converters[name]).__name__.lower() if name in converters else "str"
        kind = next((k for k in MISSING if converter.startswith(k)), "str")
        kwargs[name] = MISSING[kind] if name != "action" else "suspend"
    return kwargs


def test_every_url_the_site_serves_has_a_role():
    served = served_urls()
    assert sorted(set(served) - set(ROLE_OF)) == [], "give each new URL a role in ROLE_OF"
    assert sorted(set(ROLE_OF) - set(served)) == [], "a URL in ROLE_OF is no longer served"


@pytest.fixture
def visitors(luffy):
    return {
        "anonymous": None,
        "annotator": approved_annotator("annotator@example.com", [luffy]),
        "writer": make_writer("writer@example.com", [luffy]),
        "researcher": researcher_named("researcher@example.com"),
        "manager": study_manager_named("manager@example.com"),
        "admin": UserFactory(email="admin@example.com", is_staff=True),
    }


KEPT_OUT = {401, 403}


@pytest.mark.parametrize("method", ["get", "post"])
def test_each_visitor_gets_through_the_door_of_exactly_the_urls_of_their_roles(
    client, visitors, method
):
    wrong = []
    for name, path in sorted(served_urls().items()):
        for visitor, user in visitors.items():
            client.logout()
            if user is not None:
                client.force_login(user)
            response = getattr(client, method)(path)
            sent_to_log_in = response.status_code == 302 and response["Location"].startswith(
                "/accounts/login/"
            )
            kept_out = sent_to_log_in or response.status_code in KEPT_OUT
            if kept_out == (visitor in ROLES_WITH[ROLE_OF[name]]):
                wrong.append(
                    f"{method.upper()} {path} ({name}) as {visitor}: {response.status_code}"
                )
    assert wrong == []
