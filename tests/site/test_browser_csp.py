"""Every page satisfies the Content Security Policy it is served with, in a real browser.

The policy forbids inline scripts and styles; a page that relied on one would only show it
as a `securitypolicyviolation` event or a console error, so the test listens for both.
"""

import pytest

from annotation import demo, services
from annotation.models import ItemKind, Judgment, Study
from annotation.simulation import simulate_study
from dialogues.models import Answer, Character
from tests.builders import UserFactory, approved_annotator, lease_pair
from tests.fixtures.browser import RECORD_VIOLATIONS, session_cookie, visit_all

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def site(demo_dataset, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 20
    luffy = Character.objects.get(name_zh="蒙奇·D·路飞")
    study = demo.demo_prepare(annotators=[])
    results_study = services.study_create(
        name="Simulated",
        reference=study.reference_source,
        compared=list(study.compared_sources.all()),
        characters=[luffy],
        rounds=(1,),
        overlap=2,
        include_diversity=True,
        ask_human_guess=True,
        gold_rate=0,
    )
    services.study_open(study=results_study)
    simulate_study(study=results_study, annotators=4, seed=1)
    Study.objects.filter(pk=results_study.pk).update(status="closed")
    annotator = approved_annotator("rater@example.com", [luffy])
    newcomer = UserFactory(email="newcomer@example.com")
    services.consent_give(user=newcomer)
    services.characters_claim(user=newcomer, characters=[luffy])
    admin = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)
    return {
        "study": results_study,
        "luffy": luffy,
        "annotator": annotator,
        "newcomer": newcomer,
        "admin": admin,
    }


def test_public_pages_satisfy_the_policy(live_server, new_page, site):
    paths = ["/", "/accounts/login/", "/accounts/signup/", "/accounts/password/reset/"]

    assert visit_all(new_page, live_server, None, paths) == []


def test_screening_pages_satisfy_the_policy(live_server, new_page, site):
    paths = [
        "/screening/",
        "/screening/consent/",
        "/screening/characters/",
        f"/screening/quiz/{site['luffy'].pk}/",
    ]

    assert visit_all(new_page, live_server, site["newcomer"], paths) == []


def test_the_rating_page_satisfies_the_policy_while_it_is_used(live_server, new_page, site):
    lease = lease_pair(site["annotator"])
    page = new_page()
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.context.add_cookies([session_cookie(live_server, site["annotator"])])

    page.goto(f"{live_server.url}/annotate/{lease.token}/")
    form = page.locator("form.rating-form[data-ready]")
    form.wait_for()
    # Rate with the keyboard and submit through htmx: the swapped-in item must comply too.
    for _ in range(form.locator("fieldset.scale").count()):
        page.keyboard.press("4")
    for _ in range(form.locator("fieldset.choice").count()):
        page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "token => !location.pathname.includes(token)", arg=lease.token, timeout=10_000
    )
    page.wait_for_load_state("networkidle")

    assert Judgment.objects.filter(assignment=lease).count() == 1
    assert page.evaluate("window.__cspViolations") == []


def test_results_pages_with_charts_satisfy_the_policy(live_server, new_page, site):
    slug = site["study"].slug
    paths = ["/results/", f"/results/{slug}/", f"/results/{slug}/?round=1&dimension=basic"]

    problems = visit_all(new_page, live_server, site["admin"], paths)

    assert problems == []


def test_the_charts_are_drawn_and_filtered_under_the_policy(live_server, new_page, site):
    page = new_page()
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.context.add_cookies([session_cookie(live_server, site["admin"])])
    page.goto(f"{live_server.url}/results/{site['study'].slug}/")
    page.wait_for_function(
        "() => window.Chart && Chart.getChart('radar') && Chart.getChart('bars')"
    )
    first_chart = page.evaluate_handle("() => Chart.getChart('bars')")

    # A filter swaps in the results through htmx and the charts are drawn again.
    page.select_option("select[name=round]", "1")
    page.wait_for_url("**round=1**")
    page.wait_for_function(
        "old => Chart.getChart('bars') && Chart.getChart('bars') !== old", arg=first_chart
    )
    page.wait_for_load_state("networkidle")

    assert page.evaluate("window.__cspViolations") == []


def test_admin_pages_satisfy_the_policy(live_server, new_page, site):
    answer = Answer.objects.first()
    judgment = Judgment.objects.first()
    item = site["study"].items.filter(kind=ItemKind.PAIR).first()
    paths = [
        "/admin/",
        "/admin/dialogues/answer/",
        f"/admin/dialogues/answer/{answer.pk}/change/",
        "/admin/dialogues/character/",
        "/admin/dialogues/scenario/",
        "/admin/dialogues/source/",
        "/admin/annotation/study/",
        "/admin/annotation/study/add/",
        f"/admin/annotation/study/{site['study'].pk}/change/",
        "/admin/annotation/item/",
        f"/admin/annotation/item/{item.pk}/change/",
        "/admin/annotation/judgment/",
        f"/admin/annotation/judgment/{judgment.pk}/change/",
        "/admin/annotation/annotatorprofile/",
        "/admin/annotation/qualification/",
        "/admin/annotation/qualityflag/",
        "/admin/auth/user/",
    ]

    assert visit_all(new_page, live_server, site["admin"], paths) == []


def test_the_admin_login_page_satisfies_the_policy(live_server, new_page, site):
    assert visit_all(new_page, live_server, None, ["/admin/login/"]) == []


def test_the_api_documentation_satisfies_the_policy(live_server, new_page, site):
    page = new_page()
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.context.add_cookies([session_cookie(live_server, site["admin"])])

    page.goto(f"{live_server.url}/api/docs/")
    page.locator(".swagger-ui .info .title").wait_for()
    page.wait_for_load_state("networkidle")

    assert page.evaluate("window.__cspViolations") == []


def test_the_browsable_api_satisfies_the_policy(live_server, new_page, site):
    paths = ["/api/v1/", "/api/v1/sources/", f"/api/v1/studies/{site['study'].slug}/"]
    assert visit_all(new_page, live_server, site["admin"], paths) == []


def test_staff_pages_satisfy_the_policy(live_server, new_page, site):
    """The study manager's pages, the dashboard's throughput chart included."""
    slug = site["study"].slug
    newcomer = site["newcomer"].annotator_profile
    annotator = site["annotator"].annotator_profile
    paths = [
        "/staff/",
        "/staff/screening/",
        f"/staff/applicants/{newcomer.pk}/",
        "/staff/annotators/",
        f"/staff/annotators/{annotator.pk}/",
        f"/staff/studies/{slug}/",
        f"/staff/studies/{slug}/assignment/",
        "/staff/audit/",
    ]

    assert visit_all(new_page, live_server, site["admin"], paths) == []
