"""The writers' and staff's writing pages in Debian's Chromium, at 1280 px and on a
375 px phone: what a writer sees of the limits, an oversized paste, tap targets, the
staff form's slug field and the review page."""

import pytest

from dialogues.models import Scenario
from tests.builders import FOLLOWUP, ROUND_1, ROUND_2, UserFactory, make_run, make_writer
from tests.fixtures.browser import RECORD_VIOLATIONS, session_cookie
from writing import services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


def open_as(new_page, live_server, user, path, viewport):
    """A page signed in as `user` that records console errors, uncaught exceptions and
    policy violations."""
    phone = viewport["width"] < 600
    page = new_page(viewport=viewport, is_mobile=phone, has_touch=phone)
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.context.add_cookies([session_cookie(live_server, user)])
    page.errors = []
    page.on(
        "console",
        lambda message: page.errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(f"{live_server.url}{path}")
    page.wait_for_load_state("networkidle")
    return page


def problems(page):
    return page.errors + page.evaluate("window.__cspViolations || []")


@pytest.fixture
def run(luffy):
    return make_run([luffy], list(Scenario.objects.order_by("number")[:2]))


@pytest.fixture
def wendy(luffy):
    return make_writer("wendy@example.com", [luffy])


@pytest.fixture
def staff(db):
    return UserFactory(email="manager@example.com", is_staff=True)


def ready_field(page, name="answer"):
    field = page.locator(f"form.writing-form[data-ready] textarea[name={name}]")
    field.wait_for()
    return field


@VIEWPORTS
def test_the_writer_sees_the_count_and_the_limits_at_every_width(
    live_server, new_page, run, wendy, viewport
):
    task = services.task_next(user=wendy)
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", viewport)
    field = ready_field(page)
    field.fill("别怕！我陪你。")

    counter = page.get_by_test_id("count")
    assert counter.is_visible()
    assert page.locator("[data-count]").inner_text() == "7"
    assert "10" in counter.inner_text() and "400" in counter.inner_text()
    # The keyboard legend is for keyboards only.
    assert page.get_by_test_id("shortcuts").is_visible() is (viewport is DESKTOP)
    # Where the draft is kept matters on a phone too.
    assert "this browser" in page.get_by_test_id("draft-note").inner_text()
    assert page.get_by_test_id("draft-note").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert problems(page) == []


def paste(page, field, text):
    """A paste as the browser delivers it: a cancelable event with the clipboard's text,
    then (unless a handler took over) the browser's own insertion, cut at maxlength."""
    field.focus()
    page.evaluate(
        """([selector, text]) => {
            const field = document.querySelector(selector);
            const data = new DataTransfer();
            data.setData("text/plain", text);
            const event = new ClipboardEvent("paste", {
                clipboardData: data, bubbles: true, cancelable: true });
            if (field.dispatchEvent(event)) {
                const max = field.maxLength;
                const room = max - field.value.length +
                    (field.selectionEnd - field.selectionStart);
                field.setRangeText(text.slice(0, room), field.selectionStart,
                    field.selectionEnd, "end");
                field.dispatchEvent(new Event("input", { bubbles: true }));
            }
        }""",
        ["form.writing-form textarea[name=answer]", text],
    )


@VIEWPORTS
def test_an_oversized_paste_is_announced_and_kept_to_copy_from(
    live_server, new_page, run, wendy, viewport
):
    task = services.task_next(user=wendy)
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", viewport)
    field = ready_field(page)
    field.fill("开头：")
    pasted = "".join(f"第{i}句，别怕！" for i in range(1, 200))[:800]
    assert len(pasted) == 800

    paste(page, field, pasted)

    notice = page.get_by_test_id("paste-cut")
    notice.wait_for()
    text = notice.inner_text()
    assert "800" in text and "400" in text
    assert field.input_value() == "开头：" + pasted[:397]
    assert page.get_by_test_id("pasted-text").input_value() == pasted
    assert page.get_by_test_id("pasted-text").is_visible()
    assert notice.get_attribute("role") in ("status", "alert")
    # The recovered paste is not sent with the answer, and the notice can be closed.
    assert page.locator("form.writing-form [data-testid=pasted-text][name]").count() == 0
    page.get_by_test_id("paste-cut-dismiss").click()
    assert not notice.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert problems(page) == []


def test_emoji_count_as_one_character_each_as_the_server_counts_them(
    live_server, new_page, run, wendy
):
    """An emoji is two UTF-16 units, the browser's unit for maxlength: a limit of 400 in
    those would cut an answer of 250 emoji that the server takes."""
    task = services.task_next(user=wendy)
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", DESKTOP)
    field = ready_field(page)
    field.fill("开头：")

    paste(page, field, "🙂" * 250)

    assert field.input_value() == "开头：" + "🙂" * 250
    assert not page.get_by_test_id("paste-cut").is_visible()
    field.fill("开头：")
    paste(page, field, "🙂" * 420)
    notice = page.get_by_test_id("paste-cut")
    notice.wait_for()
    assert field.input_value() == "开头：" + "🙂" * 397
    assert "420" in notice.inner_text() and "397" in notice.inner_text()


def test_a_paste_that_fits_needs_no_notice(live_server, new_page, run, wendy):
    task = services.task_next(user=wendy)
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", DESKTOP)
    field = ready_field(page)

    paste(page, field, "别怕！我陪你一起练！")

    assert field.input_value() == "别怕！我陪你一起练！"
    assert not page.get_by_test_id("paste-cut").is_visible()
    assert page.locator("[data-pastes]").input_value() == "1"


@VIEWPORTS
def test_the_staff_source_slug_field_is_checked_by_the_browser(
    live_server, new_page, staff, luffy, viewport
):
    page = open_as(new_page, live_server, staff, "/write/staff/", viewport)
    slug = page.locator("input[name=source_slug]")

    slug.fill("fans 2027!")
    assert slug.evaluate("field => field.validity.patternMismatch") is True
    slug.fill("fans-2027_b")
    assert slug.evaluate("field => field.checkValidity()") is True
    assert problems(page) == []


@VIEWPORTS
def test_the_writing_home_buttons_are_tap_targets_apart(
    live_server, new_page, run, wendy, viewport
):
    page = open_as(new_page, live_server, wendy, "/write/", viewport)

    write = page.get_by_test_id("write-next").bounding_box()
    play = page.get_by_test_id("play-user").bounding_box()
    assert write["height"] >= 44 and play["height"] >= 44
    assert write["width"] >= 44 and play["width"] >= 44
    apart_sideways = play["x"] >= write["x"] + write["width"] + 8
    apart_below = play["y"] >= write["y"] + write["height"] + 8
    assert apart_sideways or apart_below
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert problems(page) == []


def write_dialogue(writer, player):
    task = services.task_next(user=writer)
    services.round_1_submit(user=writer, token=task.token, text=ROUND_1)
    followup = services.followup_next(user=player)
    services.followup_submit(user=player, followup_token=followup.followup_token, text=FOLLOWUP)
    return services.round_2_submit(user=writer, token=task.token, text=ROUND_2)


def style(locator):
    return locator.evaluate(
        "b => { const s = getComputedStyle(b);"
        " return [s.backgroundColor, s.color, s.borderTopColor].join(' '); }"
    )


@VIEWPORTS
def test_staff_tell_accept_return_and_edit_apart(
    live_server, new_page, run, wendy, luffy, staff, viewport
):
    task = write_dialogue(wendy, make_writer("umar@example.com", [luffy]))
    page = open_as(new_page, live_server, staff, f"/write/staff/tasks/{task.pk}/", viewport)

    accept, give_back, edit = (page.get_by_test_id(name) for name in ("accept", "return", "edit"))
    assert len({style(accept), style(give_back), style(edit)}) == 3
    assert "#}" not in page.locator("main").inner_text()
    boxes = [button.bounding_box() for button in (accept, give_back, edit)]
    for box in boxes:
        assert box["height"] >= 44
    if viewport is DESKTOP:
        # The two decisions side by side, not a stack of full-width bars.
        assert abs(boxes[0]["y"] - boxes[1]["y"]) < 2
        assert all(box["width"] < 400 for box in boxes)
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert problems(page) == []


@VIEWPORTS
def test_a_returned_dialogue_reads_in_the_order_it_was_written(
    live_server, new_page, run, wendy, luffy, staff, viewport
):
    task = write_dialogue(wendy, make_writer("umar@example.com", [luffy]))
    services.task_return(task=task, reviewer=staff, note="第一轮再热情一点")
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", viewport)
    ready_field(page)

    order = [
        page.get_by_test_id("question-r1"),
        page.locator("textarea[name=answer_r1]"),
        page.get_by_test_id("question-r2"),
        page.locator("textarea[name=answer]"),
    ]
    tops = [part.bounding_box()["y"] for part in order]
    assert tops == sorted(tops), tops
    assert page.locator("textarea[name=answer_r1]").input_value() == ROUND_1
    assert page.get_by_test_id("question-r2").inner_text() == FOLLOWUP
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    assert problems(page) == []


@VIEWPORTS
def test_the_staff_writing_pages_fit_the_screen(
    live_server, new_page, run, wendy, luffy, staff, viewport
):
    task = write_dialogue(wendy, make_writer("umar@example.com", [luffy]))
    for path in ("/write/staff/", f"/write/staff/runs/{run.pk}/"):
        page = open_as(new_page, live_server, staff, path, viewport)
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], path
        assert problems(page) == []
    assert page.get_by_test_id(f"review-{task.pk}").is_visible()


def test_an_answer_whose_sending_failed_is_still_there_when_the_writer_comes_back(
    live_server, new_page, run, wendy
):
    task = services.task_next(user=wendy)
    path = f"/write/task/{task.token}/"
    page = open_as(new_page, live_server, wendy, path, DESKTOP)
    ready_field(page).fill(ROUND_1)
    # The connection drops as the answer is sent: the browser shows its own error page.
    page.route("**/write/task/**", lambda route: route.abort())
    page.get_by_test_id("submit").click()
    page.wait_for_url("chrome-error://**")
    page.unroute("**/write/task/**")

    page.goto(f"{live_server.url}{path}")

    assert ready_field(page).input_value() == ROUND_1
    task.refresh_from_db()
    assert task.answer_r1 == ""


@pytest.mark.parametrize("stored", ["null", "{not json", "42"])
def test_a_draft_store_holding_no_draft_leaves_the_page_working(
    live_server, new_page, run, wendy, stored
):
    """A draft copy that could not be written (a full store) or was spoilt: the count,
    the paste notice and Ctrl+Enter still work."""
    task = services.task_next(user=wendy)
    page = open_as(new_page, live_server, wendy, f"/write/task/{task.token}/", DESKTOP)
    ready_field(page)
    page.evaluate(
        "([key, value]) => { localStorage.setItem(key, value); }",
        [f"chatanime-draft:write:{task.token}:1", stored],
    )
    page.reload()

    field = ready_field(page)
    field.fill("别怕！我陪你。")
    assert page.get_by_test_id("count").inner_text().startswith("7")
