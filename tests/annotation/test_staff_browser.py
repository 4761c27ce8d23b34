"""Study managers in a real browser (Debian's Chromium via Playwright): approving an
applicant from the screening queue, excluding a flagged judgment on the dashboard (in
the Chinese UI), and every staff page at desktop and phone widths."""

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import AnnotatorProfile, Judgment, JudgmentDecision, Qualification
from tests.builders import UserFactory, applicant_who_passed, approved_annotator, lease_pair
from tests.fixtures.browser import ARTIFACTS, log_in
from tests.helpers import PASSWORD, ratings

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def submit(user, lease):
    """A judgment given at once, so that it is flagged as implausibly fast."""
    return services.judgment_submit(
        user=user,
        token=lease.token,
        submission=services.Submission(
            ratings=ratings((3, 4), (2, 5)), preference="a", human_guess="unsure"
        ),
    )


def test_a_study_manager_approves_an_applicant_from_the_queue(
    live_server, new_page, manager, ready_study, luffy, settings
):
    settings.LANGUAGE_CODE = "en"
    fan = applicant_who_passed("fan@example.com", [luffy], sample="吃饱了肉再努力一次！")
    qualification = Qualification.objects.get(profile__user=fan)
    page = new_page()
    log_in(page, live_server.url, "manager@example.com")

    page.get_by_test_id("staff-link").click()
    page.get_by_role("link", name="Screening").click()
    row = page.get_by_test_id(f"application-{qualification.pk}")
    assert "吃饱了肉再努力一次！" in row.inner_text()
    row.locator("input[type=checkbox]").check()
    page.fill("textarea[name=note]", "Welcome aboard")
    page.get_by_role("button", name="Approve the chosen").click()

    page.get_by_role("status").filter(has_text="1 application approved.").wait_for()
    assert page.get_by_test_id(f"application-{qualification.pk}").count() == 0
    qualification.refresh_from_db()
    assert qualification.status == "approved" and qualification.review_note == "Welcome aboard"
    lease = services.assignment_next(user=fan)
    assert lease is not None and lease.item.character == luffy

    # The applicant sees the decision and can start rating.
    fan.set_password(PASSWORD)
    fan.save()
    applicant_page = new_page()
    log_in(applicant_page, live_server.url, "fan@example.com")
    applicant_page.goto(f"{live_server.url}/screening/")
    assert "Welcome aboard" in applicant_page.get_by_test_id(f"status-{luffy.pk}").inner_text()
    applicant_page.get_by_role("link", name="Start rating").click()
    applicant_page.locator("form.rating-form").wait_for()


def test_the_decision_on_a_long_queue_is_seen_where_the_buttons_are(
    live_server, new_page, manager, ready_study, settings
):
    """The buttons are under the queue; on a phone, a long queue puts the page's top (where
    the outcome is said) screens away. After a decision the page shows that outcome."""
    settings.LANGUAGE_CODE = "en"
    characters = list(ready_study.characters.all())
    for n in range(4):
        applicant_who_passed(f"fan{n}@example.com", characters)
    page = new_page(viewport={"width": 390, "height": 844})
    log_in(page, live_server.url, "manager@example.com")
    page.goto(f"{live_server.url}/staff/screening/")

    page.get_by_role("button", name="Reject the chosen").click()  # nothing chosen

    alert = page.locator("#queue").get_by_role("alert")
    alert.wait_for()
    expect(alert).to_be_in_viewport()
    page.locator("input[name=qualification]").last.check()
    page.get_by_role("button", name="Approve the chosen").click()
    status = page.get_by_role("status").filter(has_text="1 application approved.")
    status.wait_for()
    expect(status).to_be_in_viewport()


def test_the_coverage_gap_is_on_screen_on_a_phone(
    live_server, new_page, manager, ready_study, luffy, settings
):
    """A long name (the published data has 《Fate Zero》's Saber（阿尔托莉雅·潘德拉贡）) kept
    on one line pushed the gap and its link to the applicants off a phone's screen."""
    settings.LANGUAGE_CODE = "zh-hans"
    luffy.name_zh = "Saber（阿尔托莉雅·潘德拉贡）"
    luffy.save()
    page = new_page(viewport={"width": 390, "height": 844})
    log_in(page, live_server.url, "manager@example.com")

    page.goto(f"{live_server.url}/staff/studies/{ready_study.slug}/assignment/")

    table = page.get_by_test_id("coverage")
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth")
    expect(table.get_by_role("link", name="申请者").first).to_be_in_viewport()


def test_a_study_manager_excludes_a_flagged_judgment_in_the_chinese_ui(
    live_server, new_page, manager, ready_study, luffy, settings
):
    settings.LANGUAGE_CODE = "zh-hans"
    alice = approved_annotator("alice@example.com", [luffy])
    judgment = submit(alice, lease_pair(alice))  # submitted at once: flagged as too fast
    page = new_page()
    log_in(page, live_server.url, "manager@example.com")

    page.goto(f"{live_server.url}/staff/studies/{ready_study.slug}/")
    assert "待复核的被标记评判" in page.content()
    card = page.get_by_test_id(f"flagged-{judgment.pk}")
    # Without a reason nothing happens but a clear message.
    card.get_by_role("button", name="排除").click()
    card.get_by_role("alert").wait_for()
    assert "请填写原因" in card.get_by_role("alert").inner_text()
    judgment.refresh_from_db()
    assert not judgment.excluded

    card = page.get_by_test_id(f"flagged-{judgment.pk}")
    card.locator("input[name=reason]").fill("两秒就提交了")
    card.get_by_role("button", name="排除").click()
    page.get_by_test_id("no-flags").wait_for()

    judgment.refresh_from_db()
    assert judgment.excluded
    assert JudgmentDecision.objects.get(judgment=judgment).reason == "两秒就提交了"
    assert not Judgment.objects.filter(item__study=ready_study, excluded=False).exists()


def test_a_flagged_judgments_ratings_show_every_metric_at_desktop_width(
    live_server, new_page, manager, ready_study, luffy
):
    """Nine metric columns with English names: none behind a sideways scroll at 1280 px."""
    alice = approved_annotator("alice@example.com", [luffy])
    judgment = submit(alice, lease_pair(alice))
    page = new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, "manager@example.com")

    page.goto(f"{live_server.url}/staff/studies/{ready_study.slug}/")
    table = page.get_by_test_id(f"ratings-{judgment.pk}")

    assert "Emotional value" in table.inner_text()
    width, room = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert width <= room


PAGES = [
    "/staff/",
    "/staff/screening/",
    "/staff/applicants/{profile}/",
    "/staff/annotators/",
    "/staff/annotators/{profile}/",
    "/staff/studies/{study}/",
    "/staff/studies/{study}/assignment/",
    "/staff/audit/",
]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("width", [1200, 375])
def test_every_staff_page_fits_the_screen(
    live_server, new_page, ready_study, luffy, settings, width, language
):
    settings.LANGUAGE_CODE = language
    admin = UserFactory(email="admin@example.com", password=PASSWORD, is_staff=True)
    applicant_who_passed("fan@example.com", [luffy])
    alice = approved_annotator("alice@example.com", [luffy])
    submit(alice, lease_pair(alice))
    services.annotator_suspend(
        profile=AnnotatorProfile.objects.get(user=alice), actor=admin, reason="checking"
    )
    profile = AnnotatorProfile.objects.get(user__email="fan@example.com")
    page = new_page(viewport={"width": width, "height": 900})
    log_in(page, live_server.url, "admin@example.com")

    for url in PAGES:
        path = url.format(profile=profile.pk, study=ready_study.slug)
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        name = path.strip("/").replace("/", "-") or "staff"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"staff-{name}-{width}-{language}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path


def test_the_audit_trails_headings_keep_to_one_line_in_chinese(
    live_server, new_page, manager, ready_study, settings
):
    """The note column took what the others left: its heading 备注 stood one character a
    line."""
    settings.LANGUAGE_CODE = "zh-hans"
    services.study_set_status(study=ready_study, status="paused", actor=manager)
    page = new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, "manager@example.com")

    page.goto(f"{live_server.url}/staff/audit/")
    lines = page.locator("table.audit thead th").evaluate_all(
        "ths => ths.map(th => { const r = document.createRange(); r.selectNodeContents(th);"
        " return [th.innerText, r.getClientRects().length]; })"
    )

    assert ["备注", 1] in lines and all(count == 1 for _, count in lines), lines


def test_the_directory_sets_each_character_apart_and_keeps_a_status_whole(
    live_server, new_page, manager, luffy, natsume, settings
):
    """Two names each "Chinese · English" run together when joined by 、; and a narrow
    status column broke 已批准 over two lines."""
    settings.LANGUAGE_CODE = "zh-hans"
    approved_annotator("alice@example.com", [luffy, natsume])
    page = new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, "manager@example.com")

    page.goto(f"{live_server.url}/staff/annotators/")
    first, second = (page.locator(".name-list > span").nth(i).bounding_box() for i in (0, 1))
    badge_lines = page.locator(".status").first.evaluate(
        "b => { const r = document.createRange(); r.selectNodeContents(b);"
        " return r.getClientRects().length; }"
    )

    assert second["y"] >= first["y"] + first["height"]  # a line of its own, below
    assert badge_lines == 1
