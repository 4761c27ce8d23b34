"""Fan writers in a real browser (Debian's Chromium via Playwright): sign-up, screening,
approval as a writer, both rounds written by keyboard on a desktop and on a 375 px phone,
each playing the user for the other, staff acceptance, and the new human source rated
blind in a study."""

import re

import pytest

from annotation import demo
from annotation import services as annotation_services
from annotation.models import Judgment, Qualification, Study, StudyStatus
from dialogues.models import Answer, Scenario, Source, SourceKind
from tests.builders import UserFactory, approved_annotator, make_run, make_writer
from tests.fixtures.browser import log_in, rate_current_item_with_the_keyboard, visit_all
from tests.helpers import PASSWORD
from writing.models import ApplicationStatus, TaskState, WriterApplication, WritingTask

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP_R1 = "别怕！口语考试就像冒险，大声说出来就好了！我陪你一起练！"
DESKTOP_R2 = "结巴也没关系！我第一次出海也手忙脚乱的，每天对着大海喊一句吧！"
PHONE_R1 = "被老板说了也别泄气！吃饱了肉，明天再去狠狠地干一场！"
PHONE_R2 = "那就先睡一觉！等你醒了，我们一起想想怎么让老板刮目相看！"


def write_with_the_keyboard(page, text):
    field = page.locator("form.writing-form[data-ready] textarea[name=answer]")
    field.wait_for()
    field.focus()
    page.keyboard.type(text)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")


def test_fans_write_both_rounds_staff_accept_and_the_source_is_rated_blind(
    live_server, new_page, demo_dataset, settings, luffy
):
    settings.LANGUAGE_CODE = "en"
    demo.demo_prepare(annotators=[])  # the quiz questions
    base = live_server.url
    run = make_run([luffy], list(Scenario.objects.order_by("number")[:2]))

    # A fan signs up, consents, claims Luffy and passes the quiz, like an annotator.
    page = new_page()
    email = "writer@example.com"
    page.goto(f"{base}/accounts/signup/")
    page.fill("input[name=email]", email)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{base}/screening/")
    if "/accounts/login/" in page.url:
        log_in(page, base, email)
        page.goto(f"{base}/screening/")
    page.wait_for_url(re.compile(r"/screening/consent/$"))
    page.check("input[name=agree]")
    page.click("main button[type=submit]")
    page.check(f"input[name=character][value='{luffy.pk}']")
    page.click("main button[type=submit]")
    page.click(f"a[href='/screening/quiz/{luffy.pk}/']")
    qualification = Qualification.objects.get(profile__user__email=email)
    for question in annotation_services.quiz_questions(qualification=qualification):
        page.check(f"input[name=q{question.pk}][value='{question.correct_choice}']")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r"/screening/$"))

    # ... then applies to write Luffy with a sample.
    page.click("[data-testid=write-link]")
    page.fill("textarea[name=sample]", "<b>我是路飞</b>！别难过，吃饱了再说！")
    page.click("form[action='/write/apply/'] button[type=submit]")
    page.wait_for_load_state()
    assert page.get_by_test_id(f"application-{luffy.pk}").inner_text() == "Awaiting review"

    # A study manager approves the writer on the staff screening page.
    UserFactory(email="manager@example.com", password=PASSWORD, is_staff=True)
    staff = new_page()
    log_in(staff, base, "manager@example.com")
    staff.goto(f"{base}/staff/screening/")
    application = WriterApplication.objects.get(user__email=email)
    row = staff.get_by_test_id(f"writer-application-{application.pk}")
    assert "<b>我是路飞</b>" in row.inner_text()  # shown as text, not markup
    row.locator("button[value=approve]").click()
    staff.wait_for_load_state()
    application.refresh_from_db()
    assert application.status == ApplicationStatus.APPROVED

    # Desktop: round 1 by keyboard, then a draft of round 2 that survives a reload later.
    page.goto(f"{base}/write/")
    page.click("[data-testid=write-next]")
    page.wait_for_url(re.compile(r"/write/task/"))
    desktop_task = WritingTask.objects.get(writer__email=email)
    assert desktop_task.scenario.question in page.get_by_test_id("question-r1").inner_text()
    write_with_the_keyboard(page, DESKTOP_R1)
    assert page.get_by_test_id("waiting").is_visible()

    # Phone: another approved writer writes round 1 of the other scenario.
    phone_writer = make_writer("phone@example.com", [luffy])
    phone_writer.set_password(PASSWORD)
    phone_writer.save()
    phone = new_page(viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True)
    log_in(phone, base, "phone@example.com")
    phone.goto(f"{base}/write/")
    phone.get_by_test_id("write-next").tap()
    phone.wait_for_url(re.compile(r"/write/task/"))
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375
    field = phone.locator("form.writing-form[data-ready] textarea[name=answer]")
    field.tap()
    phone.keyboard.type(PHONE_R1)
    with phone.expect_navigation():
        phone.get_by_test_id("submit").tap()
    phone_task = WritingTask.objects.get(writer=phone_writer)
    assert phone_task.state == TaskState.AWAITING_FOLLOWUP

    # Each plays the user for the other's answer.
    phone.goto(f"{base}/write/user/")
    assert phone.get_by_test_id("answer-r1").inner_text() == DESKTOP_R1
    phone.get_by_test_id("question").tap()
    phone.keyboard.type("可是我一开口就结巴，怎么办？")
    with phone.expect_navigation():
        phone.get_by_test_id("submit").tap()
    page.goto(f"{base}/write/user/")
    assert page.get_by_test_id("answer-r1").inner_text() == PHONE_R1
    page.locator("form.writing-form[data-ready] textarea[name=question]").focus()
    page.keyboard.type("可我还是睡不着，心里好乱。")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")

    # Desktop round 2, with the whole conversation in view; the draft survives a reload.
    page.goto(f"{base}/write/next/")
    page.wait_for_url(re.compile(rf"/write/task/{desktop_task.token}/"))
    assert page.get_by_test_id("answer-r1").inner_text() == DESKTOP_R1
    assert page.get_by_test_id("question-r2").inner_text() == "可是我一开口就结巴，怎么办？"
    # The guide is folded in round 2; its summary says it opens, not a bare heading.
    assert page.get_by_test_id("guide-toggle").inner_text().endswith("▸ show")
    page.get_by_test_id("guide-toggle").click()
    assert page.get_by_test_id("guide-toggle").inner_text().endswith("▾ hide")
    page.locator("form.writing-form[data-ready] textarea[name=answer]").focus()
    page.keyboard.type(DESKTOP_R2[:10])
    page.reload()
    field = page.locator("form.writing-form[data-ready] textarea[name=answer]")
    field.wait_for()
    assert field.input_value() == DESKTOP_R2[:10]
    field.focus()
    page.keyboard.press("End")
    page.keyboard.type(DESKTOP_R2[10:])
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")

    # Phone round 2.
    phone.goto(f"{base}/write/next/")
    phone.wait_for_url(re.compile(rf"/write/task/{phone_task.token}/"))
    assert phone.get_by_test_id("question-r2").inner_text() == "可我还是睡不着，心里好乱。"
    phone.locator("form.writing-form[data-ready] textarea[name=answer]").tap()
    phone.keyboard.type(PHONE_R2)
    with phone.expect_navigation():
        phone.get_by_test_id("submit").tap()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375

    desktop_task.refresh_from_db()
    phone_task.refresh_from_db()
    assert (desktop_task.state, desktop_task.answer_r1, desktop_task.answer_r2) == (
        TaskState.SUBMITTED,
        DESKTOP_R1,
        DESKTOP_R2,
    )
    assert (phone_task.state, phone_task.answer_r2) == (TaskState.SUBMITTED, PHONE_R2)
    assert desktop_task.flags == [] and phone_task.flags == []

    # Staff accept both dialogues on the review page.
    for task in (desktop_task, phone_task):
        staff.goto(f"{base}/write/staff/runs/{run.pk}/")
        staff.get_by_test_id(f"review-{task.pk}").click()
        staff.get_by_test_id("accept").click()
        staff.wait_for_url(re.compile(rf"/write/staff/runs/{run.pk}/$"))
    assert Answer.objects.filter(source=run.source).count() == 4
    staff.goto(f"{base}/write/staff/")
    assert "2 / 2 (100%)" in staff.get_by_test_id(f"run-accepted-{run.pk}").inner_text()

    # A study of the new human source against the models; an annotator rates it blind.
    study = annotation_services.study_create(
        name="New fans vs models",
        reference=run.source,
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=[luffy],
        rounds=(1,),
        overlap=1,
    )
    annotation_services.study_open(study=study)
    # The demo study (opened above for its quiz) is closed, so the rater works on this one.
    Study.objects.exclude(pk=study.pk).update(status=StudyStatus.CLOSED)
    rater = approved_annotator("rater@example.com", [luffy])
    rater.set_password(PASSWORD)
    rater.save()
    rating = new_page()
    log_in(rating, base, "rater@example.com")
    rating.goto(f"{base}/annotate/")
    rating.wait_for_selector("form.rating-form")
    seen_a_fans_answer = False
    for _ in range(6):  # diversity sets of the models may come first
        html = rating.locator("#work").inner_html()
        assert run.source.slug not in html and "writer@example.com" not in html
        assert "fan" not in rating.locator("form.rating-form").get_attribute("class")
        if DESKTOP_R1 in html or PHONE_R1 in html:
            seen_a_fans_answer = True
            rate_current_item_with_the_keyboard(rating)
            break
        rate_current_item_with_the_keyboard(rating)
    assert seen_a_fans_answer
    rated = Judgment.objects.filter(annotator=rater).order_by("-submitted_at").first()
    assert rated.item.study == study
    assert rated.item.slots.filter(answer__source=run.source).exists()


def test_the_writing_pages_satisfy_the_content_security_policy(
    live_server, new_page, demo_dataset, luffy, chat_server
):
    """Writer, user-role and staff pages, the polling page of a simulated follow-up
    included, under the site's policy (no inline script or style)."""
    from collection.models import ModelEndpoint
    from writing import services

    simulator = ModelEndpoint.objects.create(
        name="simulator", base_url=chat_server.url, model="user-sim"
    )
    scenarios = list(Scenario.objects.order_by("number")[:2])
    simulated = make_run(
        [luffy],
        scenarios[:1],
        name="Simulated",
        source_slug="fans-simulated",
        followup_mode="simulator",
        simulator=simulator,
    )
    writer = make_writer("writer@example.com", [luffy])
    waiting = services.task_next(user=writer)
    # Handed in without the worker's follow-up: the page polls.
    WritingTask.objects.filter(pk=waiting.pk).update(
        state=TaskState.AWAITING_FOLLOWUP, answer_r1="别怕！我陪你一起想办法！"
    )
    run = make_run([luffy], scenarios[1:])
    other = make_writer("other@example.com", [luffy])
    writing = services.task_next(user=other)
    assert writing.run == run and simulated.tasks.get().state == TaskState.AWAITING_FOLLOWUP
    staff = UserFactory(email="root@example.com", is_staff=True, is_superuser=True)

    writer_paths = ["/write/", f"/write/task/{waiting.token}/"]
    assert visit_all(new_page, live_server, writer, writer_paths) == []
    other_paths = [f"/write/task/{writing.token}/", "/write/user/"]
    assert visit_all(new_page, live_server, other, other_paths) == []
    staff_paths = ["/write/staff/", f"/write/staff/runs/{run.pk}/", "/staff/screening/"]
    assert visit_all(new_page, live_server, staff, staff_paths) == []
