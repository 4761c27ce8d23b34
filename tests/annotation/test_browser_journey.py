"""The annotator's whole journey in a real browser (Debian's Chromium via Playwright)."""

import re

import pytest
from django.core import mail

from annotation import services
from annotation.models import Judgment, Qualification
from tests.builders import approved_annotator
from tests.fixtures.browser import (
    approve_passed_applications_in_the_admin,
    log_in,
    rate_current_item_with_the_keyboard,
)
from tests.helpers import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_up_screening_approval_and_keyboard_rating(
    live_server, new_page, ready_study, settings, luffy
):
    settings.ACCOUNT_EMAIL_VERIFICATION = "mandatory"
    settings.LANGUAGE_CODE = "en"
    base = live_server.url
    page = new_page()
    email = "fan@example.com"

    # Sign up and verify the email address.
    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert "verif" in page.content().lower()
    link = re.search(r"https?://\S+/accounts/confirm-email/\S+/", mail.outbox[-1].body).group(0)
    page.goto(link.replace("http://testserver", base))
    page.click("main button[type=submit]")
    page.wait_for_load_state()

    # Consent, characters, quiz.
    page.goto(f"{base}/annotate/")
    if "/accounts/login/" in page.url:
        log_in(page, base, email)
        page.goto(f"{base}/annotate/")
    page.wait_for_url(re.compile(r"/screening/consent/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/characters/$"))
    page.check(f"input[name=character][value='{luffy.pk}']")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))
    page.click(f"a[href='/screening/quiz/{luffy.pk}/']")
    qualification = Qualification.objects.get(profile__user__email=email)
    for question in services.quiz_questions(qualification=qualification):
        page.check(f"input[name=q{question.pk}][value='{question.correct_choice}']")
    page.fill("textarea[name=roleplay_sample]", "没事的！吃饱了肉再努力一次！")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))
    assert page.get_by_test_id("waiting").is_visible()

    # A study manager approves the application in the admin.
    approve_passed_applications_in_the_admin(new_page(), base)
    qualification.refresh_from_db()
    assert qualification.status == "approved"

    # Rate three items with the keyboard only.
    page.goto(f"{base}/annotate/")
    page.wait_for_selector("form.rating-form")
    for _ in range(3):
        rate_current_item_with_the_keyboard(page)
    assert Judgment.objects.filter(annotator__email=email).count() == 3
    assert "Done 3 of" in page.get_by_test_id("progress").inner_text()

    # Half-fill an item, reload: the draft is still there.
    page.locator("form.rating-form[data-ready]").wait_for()
    page.keyboard.press("5")
    page.fill("textarea[name=comment]", "还没想好")
    url = page.url
    page.reload()
    page.locator("form.rating-form[data-ready]").wait_for()
    assert page.url == url
    assert page.locator("form.rating-form input[type=radio]:checked").count() == 1
    assert page.locator("form.rating-form input[type=radio][value='5']:checked").count() == 1
    assert page.input_value("textarea[name=comment]") == "还没想好"

    # Skip it with a reason.
    page.click("details.skip summary")
    page.select_option("select[name=reason]", "unfamiliar")
    page.click("details.skip button[type=submit]")
    page.wait_for_function(f"() => location.href !== {url!r}")
    assert page.locator("form.rating-form").count() == 1
    assert "today 3" in page.get_by_test_id("progress").inner_text()
    assert page.get_by_test_id("shortcuts").is_visible()


def test_a_phone_sized_screen_rates_with_taps_and_does_not_scroll_sideways(
    live_server, new_page, ready_study, luffy
):
    user = approved_annotator("phone@example.com", [luffy])
    user.set_password(PASSWORD)
    user.save()
    page = new_page(viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True)
    log_in(page, live_server.url, "phone@example.com")

    page.goto(f"{live_server.url}/annotate/")
    page.locator("form.rating-form[data-ready]").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    for group in page.locator("form.rating-form [data-group]").all():
        group.locator("label").first.tap()
    page.locator("form.rating-form button[type=submit]").tap()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=progress]').innerText.includes('today 1')"
    )

    assert Judgment.objects.filter(annotator=user).count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
