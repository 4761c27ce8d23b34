"""Attack and bad input: throttled log-ins, CSRF on every write, security headers, and
hostile text shown as text everywhere it appears."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotation import services
from annotation.models import Judgment, Study
from dialogues.models import Answer, Character, Source, SourceKind
from tests.builders import UserFactory, approved_annotator, lease_pair, researcher_named
from tests.fixtures.data import write_source
from tests.fixtures.services import REPO
from tests.helpers import PRODUCTION_ENV, complete_form, run_manage

pytestmark = pytest.mark.django_db


# Log-in throttling -----------------------------------------------------------------------


@pytest.fixture
def staff_member():
    return UserFactory(
        email="chief@example.com", username="chief", password="right-pw-42", is_staff=True
    )


def site_login(client, email, password, next_url="/admin/"):
    return client.post(f"/accounts/login/?next={next_url}", {"login": email, "password": password})


def test_the_admin_sends_staff_to_the_site_log_in_and_back(client, staff_member):
    to_admin_login = client.get("/admin/")
    to_site_login = client.get(to_admin_login["Location"])

    assert to_admin_login.status_code == 302
    assert to_site_login.status_code == 302
    assert to_site_login["Location"] == "/accounts/login/?next=%2Fadmin%2F"

    logged_in = client.post(
        to_site_login["Location"], {"login": "chief@example.com", "password": "right-pw-42"}
    )

    assert logged_in.status_code == 302 and logged_in["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_admin_log_in_works_below_the_limit(client, staff_member):
    for _ in range(4):
        assert site_login(client, "chief@example.com", "wrong").status_code == 200

    response = site_login(client, "chief@example.com", "right-pw-42")

    assert response.status_code == 302
    assert client.session.get("_auth_user_id") == str(staff_member.pk)


def test_the_admin_password_form_is_gone(client, staff_member):
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "chief", "password": "right-pw-42"}
    )

    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert "_auth_user_id" not in client.session


def test_a_signed_in_non_staff_account_is_refused_the_admin_log_in(client):
    client.force_login(UserFactory(email="fan@example.com"))

    assert client.get("/admin/login/").status_code == 403


def test_the_admin_log_in_is_throttled_after_five_failures(client, staff_member):
    for _ in range(5):
        site_login(client, "chief@example.com", "wrong")

    response = site_login(client, "chief@example.com", "right-pw-42")

    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302


def test_the_admin_throttle_counts_per_address_across_accounts(client, staff_member):
    for i in range(5):
        site_login(client, f"guess{i}@example.com", "wrong")

    response = site_login(client, "chief@example.com", "right-pw-42")

    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_admin_throttle_counts_per_account_across_addresses(staff_member):
    for i in range(5):
        site_login(Client(REMOTE_ADDR=f"10.0.0.{i}"), "chief@example.com", "wrong")
    client = Client(REMOTE_ADDR="10.0.1.1")

    response = site_login(client, "Chief@example.com", "right-pw-42")

    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_throttle_message_speaks_chinese_by_default(client, staff_member, settings):
    settings.LANGUAGE_CODE = "zh-hans"
    for _ in range(5):
        site_login(client, "chief@example.com", "wrong")

    response = site_login(client, "chief@example.com", "wrong")

    assert "登录失败次数过多" in response.content.decode()


# CSRF on every state-changing request -----------------------------------------------------


@pytest.fixture
def csrf_client():
    return Client(enforce_csrf_checks=True)


def test_every_form_post_without_a_csrf_token_is_refused(csrf_client, alice, study, luffy):
    lease = lease_pair(alice)
    staff = UserFactory(email="staff@example.com", is_staff=True)
    newcomer = UserFactory(email="new@example.com")
    services.consent_give(user=newcomer)
    services.characters_claim(user=newcomer, characters=[luffy])
    posts = [
        (alice, f"/annotate/{lease.token}/", complete_form()),
        (alice, f"/annotate/{lease.token}/skip/", {"reason": "other"}),
        (alice, "/accounts/logout/", {}),
        (alice, "/i18n/setlang/", {"language": "en"}),
        (newcomer, "/screening/consent/", {"agree": "yes"}),
        (newcomer, "/screening/characters/", {"character": [luffy.pk]}),
        (newcomer, f"/screening/quiz/{luffy.pk}/", {"roleplay_sample": "hi"}),
        (staff, f"/results/{study.slug}/refresh/", {}),
        (staff, "/admin/annotation/study/add/", {"name": "x"}),
        (None, "/accounts/login/", {"login": "a@example.com", "password": "x"}),
        (None, "/accounts/signup/", {"email": "b@example.com"}),
        (None, "/admin/login/", {"username": "chief", "password": "x"}),
    ]
    for user, url, data in posts:
        if user is None:
            csrf_client.logout()
        else:
            csrf_client.force_login(user)
        for headers in ({}, {"HX-Request": "true"}):
            response = csrf_client.post(url, data, headers=headers)
            assert response.status_code == 403, f"{url} accepted a post without a CSRF token"

    lease.refresh_from_db()
    assert lease.state == "active"
    assert Judgment.objects.count() == 0


def test_htmx_requests_carry_the_csrf_token_of_the_page(csrf_client, alice):
    lease = lease_pair(alice)
    csrf_client.force_login(alice)
    page = csrf_client.get(f"/annotate/{lease.token}/").content.decode()
    token = csrf_client.cookies["csrftoken"].value
    # base.html puts the token in hx-headers on <body>, so every htmx request sends it.
    assert 'hx-headers=\'{"X-CSRFToken": "' in page

    forged = csrf_client.post(
        f"/annotate/{lease.token}/",
        complete_form(),
        headers={"HX-Request": "true", "X-CSRFToken": "not-the-token"},
    )
    assert forged.status_code == 403
    genuine = csrf_client.post(
        f"/annotate/{lease.token}/",
        complete_form(),
        headers={"HX-Request": "true", "X-CSRFToken": token},
    )

    assert genuine.status_code == 200
    assert Judgment.objects.filter(assignment=lease).count() == 1


# Headers and production settings ---------------------------------------------------------


@pytest.mark.parametrize("url", ["/", "/accounts/login/", "/admin/login/", "/api/docs/"])
def test_pages_are_served_with_a_strict_policy_and_no_framing(client, url):
    response = client.get(url)

    policy = response["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'self'"
    assert directives["form-action"] == "'self'"
    assert "unsafe" not in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_no_template_has_inline_script_or_style():
    """What the browser test checks page by page, checked for every template at once."""
    import re

    offenders = []
    for template in (REPO / "templates").rglob("*.html"):
        text = template.read_text(encoding="utf-8")
        if re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text) and "json_script" not in text:
            offenders.append(f"{template.name}: inline <script>")
        if re.search(r"<style\b|\sstyle=|\son[a-z]+=", text):
            offenders.append(f"{template.name}: inline style or event handler")
    assert offenders == []


def test_production_cookies_are_https_only_with_hsts_and_the_policy():
    script = (
        "from django.conf import settings as s; import json; print(json.dumps({"
        "'session': s.SESSION_COOKIE_SECURE, 'csrf': s.CSRF_COOKIE_SECURE,"
        "'hsts': s.SECURE_HSTS_SECONDS, 'redirect': s.SECURE_SSL_REDIRECT,"
        "'frame': s.X_FRAME_OPTIONS, 'csp': s.SECURE_CSP,"
        "'middleware': s.MIDDLEWARE}))"
    )

    result = run_manage("shell", "-c", script, env=PRODUCTION_ENV)

    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout.strip().splitlines()[-1])
    assert values["session"] is True and values["csrf"] is True
    assert values["hsts"] >= 365 * 24 * 3600 and values["redirect"] is True
    assert values["frame"] == "DENY"
    assert values["csp"]["script-src"] == ["'self'"]
    assert values["csp"]["frame-ancestors"] == ["'none'"]
    assert "django.middleware.csp.ContentSecurityPolicyMiddleware" in values["middleware"]
    assert "django.middleware.csrf.CsrfViewMiddleware" in values["middleware"]


# Hostile text ------------------------------------------------------------------------------

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
TEMPLATE = "{{ 7*7 }}{% debug %}"
FORMULA = '=HYPERLINK("http://evil.example","click")'
TEXTAREA = "</textarea><script>alert(2)</script>"
HOSTILE = [SCRIPT, IMG, TEMPLATE, FORMULA, TEXTAREA]
RAW_MARKUP = ["<script>alert", "<img src=x", "onerror=alert(1)>"]
HOSTILE_KEY = f"《{SCRIPT}》的{IMG}"


def hostile_dialogue(n):
    return {
        "dialog_id": n,
        "question_r1": f"场景{n}{SCRIPT}",
        "answer_r1": f"{IMG} 回答{n} {TEMPLATE}",
        "question_r2": f"{FORMULA} 追问{n}",
        "answer_r2": f"{TEXTAREA} 第二轮{n} {SCRIPT}",
    }


@pytest.fixture
def hostile(tmp_path, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    content = {HOSTILE_KEY: [hostile_dialogue(n) for n in (1, 2, 3)]}
    write_source(tmp_path, "human", content)
    write_source(tmp_path, "evil-model", content)
    call_command("import_chatanime", str(tmp_path), stdout=io.StringIO())
    character = Character.objects.get()
    study = services.study_create(
        name=f"Study {SCRIPT}",
        reference=Source.objects.get(kind=SourceKind.HUMAN),
        compared=list(Source.objects.filter(kind=SourceKind.LLM)),
        characters=[character],
        rounds=(1, 2),
        overlap=2,
        gold_rate=0,
    )
    services.study_open(study=study)
    annotator = approved_annotator("rater@example.com", [character])
    # An annotator sees each answer once: one writer per hostile comment.
    for i, comment in enumerate(HOSTILE):
        writer = approved_annotator(f"writer{i}@example.com", [character])
        lease = lease_pair(writer)
        services.judgment_submit(
            user=writer,
            token=lease.token,
            submission=services.Submission(
                ratings={(p, m): 3 for p in "ab" for m in complete_metric_slugs()},
                preference="a",
                comment=comment,
            ),
        )
    services.study_recompute(study=study)
    staff = UserFactory(email="boss@example.com", is_staff=True, is_superuser=True)
    researcher = researcher_named("scientist@example.com")
    return {
        "study": study,
        "annotator": annotator,
        "staff": staff,
        "researcher": researcher,
        "character": character,
    }


def complete_metric_slugs():
    from annotation.metric_definitions import PAIR_METRIC_SLUGS

    return PAIR_METRIC_SLUGS


def assert_shown_as_text(response, where):
    assert response.status_code == 200, where
    body = response.content.decode()
    for markup in RAW_MARKUP:
        assert markup not in body, f"{markup!r} reached {where} unescaped"
    return body


def test_hostile_text_is_escaped_on_the_rating_page(client, hostile):
    client.force_login(hostile["annotator"])
    lease = lease_pair(hostile["annotator"])

    for headers in ({}, {"HX-Request": "true"}):
        body = assert_shown_as_text(
            client.get(f"/annotate/{lease.token}/", headers=headers), "the rating page"
        )
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
        assert "{{ 7*7 }}" in body and ">49<" not in body
    # A refused submission echoes the comment back into the textarea: escaped there too.
    refused = client.post(
        f"/annotate/{lease.token}/", {"comment": TEXTAREA}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 422
    body = refused.content.decode()
    assert "&lt;/textarea&gt;&lt;script&gt;" in body
    assert "</textarea><script>" not in body


def test_hostile_text_is_escaped_in_the_admin(client, hostile):
    client.force_login(hostile["staff"])
    answer = Answer.objects.first()
    judgment = Judgment.objects.exclude(comment="").first()
    pages = [
        "/admin/dialogues/answer/",
        "/admin/dialogues/answer/?q=alert",
        f"/admin/dialogues/answer/{answer.pk}/change/",
        "/admin/dialogues/character/",
        f"/admin/dialogues/character/{hostile['character'].pk}/change/",
        "/admin/dialogues/scenario/",
        "/admin/annotation/study/",
        f"/admin/annotation/study/{hostile['study'].pk}/change/",
        "/admin/annotation/item/",
        "/admin/annotation/judgment/",
        f"/admin/annotation/judgment/{judgment.pk}/change/",
    ]

    for page in pages:
        assert_shown_as_text(client.get(page), page)


def test_hostile_text_is_escaped_on_the_results_pages(client, hostile):
    client.force_login(hostile["researcher"])
    slug = hostile["study"].slug

    assert_shown_as_text(client.get("/results/"), "the results list")
    body = assert_shown_as_text(client.get(f"/results/{slug}/"), "the results page")
    assert_shown_as_text(
        client.get(f"/results/{slug}/?round=1", headers={"HX-Request": "true"}), "the fragment"
    )
    # The chart data is JSON inside a <script type="application/json">: no way out of it.
    assert '<script id="chart-data" type="application/json">' in body
    chart = body.split('<script id="chart-data" type="application/json">')[1].split("</script>")[0]
    assert "<" not in chart


def test_hostile_text_stays_data_in_the_api(client, hostile):
    client.force_login(hostile["researcher"])

    answers = client.get("/api/v1/answers/")
    judgments = client.get("/api/v1/judgments/")
    browsable = client.get("/api/v1/answers/", headers={"Accept": "text/html"})

    assert answers["Content-Type"] == "application/json"
    texts = {a["text"] for a in answers.json()["results"]}
    assert any(SCRIPT in text for text in texts)  # stored and returned exactly as imported
    assert {j["comment"] for j in judgments.json()["results"]} >= set(HOSTILE)
    assert_shown_as_text(browsable, "the browsable API")


def test_hostile_text_is_neutralised_in_the_exports(client, hostile):
    client.force_login(hostile["researcher"])
    slug = hostile["study"].slug

    for kind in ("csv", "wide"):
        response = client.get(f"/api/v1/studies/{slug}/export/?kind={kind}")
        text = b"".join(response.streaming_content).decode("utf-8-sig")
        rows = list(csv.DictReader(io.StringIO(text)))
        comments = {row["comment"] for row in rows}
        assert f"'{FORMULA}" in comments, kind
        assert not any(
            cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row.values()
        ), kind
    jsonl = client.get(f"/api/v1/studies/{slug}/export/?kind=jsonl")
    lines = b"".join(jsonl.streaming_content).decode().splitlines()
    assert jsonl["Content-Type"].startswith("application/x-ndjson")
    assert {json.loads(line)["comment"] for line in lines} >= set(HOSTILE)


def test_the_export_command_neutralises_formulas_too(hostile, tmp_path):
    target = tmp_path / "ratings.csv"

    call_command("export_ratings", "--format", "csv", "-o", str(target), stdout=io.StringIO())

    rows = list(csv.DictReader(target.open(encoding="utf-8-sig")))
    assert f"'{FORMULA}" in {row["comment"] for row in rows}
    assert not any(row["comment"].startswith("=") for row in rows)


def test_study_names_and_character_names_are_escaped_for_annotators_too(client, hostile):
    Study.objects.update(name=SCRIPT)
    client.force_login(hostile["annotator"])

    for page in ("/", "/screening/", "/screening/characters/"):
        assert_shown_as_text(client.get(page), page)


# The broker is down ------------------------------------------------------------------------


def test_asking_for_a_recompute_while_the_broker_is_down_says_so(client, study, monkeypatch):
    from kombu.exceptions import OperationalError

    from annotation import tasks

    def unreachable(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis. Connection refused.")

    monkeypatch.setattr(tasks.study_results_refresh, "apply_async", unreachable)
    client.force_login(UserFactory(email="boss@example.com", is_staff=True))

    response = client.post(f"/results/{study.slug}/refresh/", follow=True)

    assert response.status_code == 200
    assert "task queue cannot be reached" in response.content.decode()
