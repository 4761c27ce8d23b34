"""The REST API: researchers and staff only, filters, token authentication, exports."""

import csv
import io

import pytest
from rest_framework.authtoken.models import Token

from annotation.simulation import simulate_study
from tests.builders import UserFactory, approved_annotator, make_study, researcher_named

pytestmark = pytest.mark.django_db

LISTS = [
    "/api/v1/sources/",
    "/api/v1/characters/",
    "/api/v1/scenarios/",
    "/api/v1/answers/",
    "/api/v1/studies/",
    "/api/v1/items/",
    "/api/v1/judgments/",
    "/api/v1/ratings/",
]


@pytest.fixture
def world(demo_dataset, luffy, settings):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    simulate_study(study=study, annotators=3, seed=2)
    researcher = researcher_named("scientist@example.com")
    return {
        "study": study,
        "researcher": researcher,
        "staff": UserFactory(email="boss@example.com", is_staff=True),
        "annotator": approved_annotator("rater@example.com", [luffy]),
    }


def every_url(world):
    slug = world["study"].slug
    return [
        *LISTS,
        f"/api/v1/studies/{slug}/",
        f"/api/v1/studies/{slug}/results/",
        f"/api/v1/studies/{slug}/export/",
        "/api/v1/sources/human/",
        "/api/v1/scenarios/1/",
    ]


def test_anonymous_visitors_and_annotators_get_nothing(client, world):
    for url in every_url(world):
        assert client.get(url).status_code in (401, 403), url
    client.force_login(world["annotator"])
    for url in every_url(world):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"human" not in response.content


@pytest.mark.parametrize("who", ["researcher", "staff"])
def test_researchers_and_staff_read_everything(client, world, who):
    client.force_login(world[who])

    for url in every_url(world):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "The study data, read-only, for researchers"),
        ("zh-hans", "研究数据（只读），供研究者使用"),
    ],
)
def test_the_browsable_root_speaks_to_researchers_in_their_language(client, world, language, said):
    client.force_login(world["researcher"])
    client.cookies["django_language"] = language

    page = client.get("/api/v1/", headers={"Accept": "text/html"}).content.decode()

    assert said in page
    assert 'href="/api/docs/"' in page
    assert "front door" not in page  # the code's comment, not for its readers


def test_writes_are_not_allowed(client, world):
    client.force_login(world["staff"])

    assert client.post("/api/v1/sources/", {"slug": "x"}).status_code == 405
    assert client.delete(f"/api/v1/studies/{world['study'].slug}/").status_code == 405


def test_filters_narrow_the_ratings(client, world):
    client.force_login(world["researcher"])

    body = client.get(
        "/api/v1/ratings/", {"source": "kumo-7b", "metric": "fluency", "round": 1}
    ).json()

    assert body["count"] > 0
    assert {(r["source"], r["metric"]) for r in body["results"]} == {("kumo-7b", "fluency")}


def test_a_bad_filter_is_a_clear_400(client, world):
    client.force_login(world["researcher"])

    response = client.get("/api/v1/ratings/", {"round": "two"})

    assert response.status_code == 400
    assert "round" in response.json()


def test_scripts_authenticate_with_a_token(client, world):
    token = Token.objects.create(user=world["researcher"])

    response = client.get("/api/v1/studies/", headers={"Authorization": f"Token {token.key}"})

    assert response.status_code == 200
    assert response.json()["results"][0]["slug"] == world["study"].slug


def test_results_come_from_the_workers_store(client, world):
    client.force_login(world["researcher"])

    body = client.get(f"/api/v1/studies/{world['study'].slug}/results/").json()

    assert body["study"] == world["study"].slug
    assert "leaderboard" in body and "computed_at" in body


def test_the_export_streams_the_long_csv(client, world):
    client.force_login(world["researcher"])

    response = client.get(f"/api/v1/studies/{world['study'].slug}/export/", {"kind": "csv"})

    assert response.status_code == 200 and response.streaming
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    from annotation.models import Rating

    assert len(rows) == Rating.objects.filter(judgment__item__study=world["study"]).count()
    assert response["Content-Disposition"].endswith('-ratings.csv"')


@pytest.mark.parametrize(
    ("query", "name", "starts"),
    [
        ({"kind": "wide"}, "ratings-wide.csv", b"study,"),
        ({"kind": "jsonl"}, "ratings.jsonl", b"{"),
        ({"kind": "csv", "bom": "1"}, "ratings.csv", "\ufeff".encode()),
        ({"kind": "wide", "bom": "true"}, "ratings-wide.csv", "\ufeff".encode()),
    ],
)
def test_each_export_has_a_name_of_its_own_and_a_bom_on_request(client, world, query, name, starts):
    client.force_login(world["researcher"])

    response = client.get(f"/api/v1/studies/{world['study'].slug}/export/", query)

    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{world["study"].slug}-{name}"'
    assert b"".join(response.streaming_content).startswith(starts)


def test_a_bom_is_refused_for_jsonl(client, world):
    client.force_login(world["researcher"])

    response = client.get(
        f"/api/v1/studies/{world['study'].slug}/export/", {"kind": "jsonl", "bom": "1"}
    )

    assert response.status_code == 400
    assert "byte order mark" in response.json()["bom"]


def test_an_unknown_export_format_is_refused(client, world):
    client.force_login(world["researcher"])

    assert (
        client.get(f"/api/v1/studies/{world['study'].slug}/export/", {"kind": "xlsx"}).status_code
        == 400
    )


def test_the_openapi_schema_lists_the_endpoints(client):
    schema = client.get("/api/schema/").content.decode()

    for path in (
        "/api/v1/ratings/",
        "/api/v1/studies/{slug}/results/",
        "/api/v1/studies/{slug}/export/",
    ):
        assert path in schema


def test_the_api_is_throttled(client, world, monkeypatch):
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"user": "3/hour", "anon": "2/hour"})
    client.force_login(world["researcher"])

    statuses = [client.get("/api/v1/sources/").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/ratings/?source=%00",
        "/api/v1/items/?kind=a%00b",
        "/api/v1/sources/%00/",
        "/api/v1/studies/x%00/export/",
        "/api/v1/answers/?round=%C2%B2",
        "/api/v1/judgments/?character=%D9%A3",
    ],
)
def test_values_the_database_cannot_hold_are_a_clear_400(client, world, url):
    client.force_login(world["researcher"])

    response = client.get(url)

    assert response.status_code == 400
    assert response.json()


@pytest.mark.parametrize(
    "query", [{"round": "99999999999999999999"}, {"character": "-1"}, {"scenario": "1.5"}]
)
def test_a_number_no_database_column_can_hold_is_a_clear_400(client, world, query):
    client.force_login(world["researcher"])

    response = client.get("/api/v1/answers/", query)

    assert response.status_code == 400
    assert list(response.json()) == list(query)


@pytest.mark.parametrize(
    ("url", "query", "says"),
    [
        ("/api/v1/ratings/", {"study": "pilto-study"}, "no study 'pilto-study'"),
        ("/api/v1/judgments/", {"source": "gpt-5"}, "no source 'gpt-5'"),
        ("/api/v1/answers/", {"source": "gpt-5"}, "/api/v1/sources/"),
        ("/api/v1/items/", {"study": "nope"}, "/api/v1/studies/"),
        ("/api/v1/items/", {"kind": "pairs"}, "pair or diversity"),
        ("/api/v1/ratings/", {"metric": "fluent"}, "one of fluency, coherency"),
    ],
)
def test_a_filter_naming_nothing_that_exists_is_a_400_not_an_empty_list(
    client, world, url, query, says
):
    # A typo in a slug used to answer 200 with no results, read as "no data".
    client.force_login(world["researcher"])

    response = client.get(url, query)

    assert response.status_code == 400
    [name] = query
    assert says in response.json()[name][0]


def test_known_slugs_still_filter(client, world):
    client.force_login(world["researcher"])

    response = client.get("/api/v1/ratings/", {"study": world["study"].slug, "metric": "fluency"})

    assert response.status_code == 200 and response.json()["count"] > 0


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ({"page": "two"}, 400, "must be a whole number from 1"),
        ({"page": "0"}, 400, "must be a whole number from 1"),
        ({"page": "999"}, 404, "past the last page (1)"),
    ],
)
def test_a_bad_page_number_says_what_is_wrong(client, world, query, status, says):
    client.force_login(world["researcher"])

    response = client.get("/api/v1/studies/", query)

    assert response.status_code == status
    assert says in str(response.json())


@pytest.mark.parametrize("name", ["include_excluded", "bom"])
def test_a_yes_no_export_option_that_is_neither_is_refused(client, world, name):
    # `include_excluded=maybe` used to be read as "no" and leave excluded judgments out.
    client.force_login(world["researcher"])

    response = client.get(f"/api/v1/studies/{world['study'].slug}/export/", {name: "maybe"})

    assert response.status_code == 400
    assert response.json() == {name: "1 or 0 (true or false)"}


def test_a_page_size_is_honoured_or_refused(client, world):
    # It used to be ignored (100 results) while the `next` link carried it along.
    client.force_login(world["researcher"])

    five = client.get("/api/v1/ratings/", {"page_size": "5"}).json()
    too_many = client.get("/api/v1/ratings/", {"page_size": "5000"})
    nonsense = client.get("/api/v1/ratings/", {"page_size": "lots"})

    assert len(five["results"]) == 5 and "page_size=5" in five["next"]
    assert too_many.status_code == nonsense.status_code == 400
    assert nonsense.json() == {"page_size": "a whole number from 1 to 1000"}


def test_a_script_naming_no_language_reads_the_apis_messages_in_english(client, world, settings):
    settings.LANGUAGE_CODE = "zh-hans"  # the site's default
    token = Token.objects.create(user=world["researcher"])
    script = {"Authorization": f"Token {token.key}"}

    refused = client.get("/api/v1/studies/", headers={"Authorization": "Token not-a-key"})
    missing = client.get("/api/v1/studies/no-such-study/", headers=script)
    chinese = client.get(
        "/api/v1/studies/",
        headers={"Authorization": "Token not-a-key", "Accept-Language": "zh-hans"},
    )

    assert refused.status_code == 403 and refused.json() == {"detail": "Invalid token."}
    assert missing.status_code == 404 and missing.json()["detail"].startswith("No Study")
    assert chinese.json() == {"detail": "认证令牌无效。"}  # asked for, it is Chinese


def test_a_diversity_set_judgment_is_listed_once_when_filtered_by_its_source(
    client, demo_dataset, luffy, settings
):
    from annotation.models import Judgment

    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), characters=[luffy], include_diversity=True)
    simulate_study(study=study, annotators=3, seed=2)
    judgment = Judgment.objects.filter(item__study=study, item__kind="diversity").first()
    source = judgment.item.diversity_source.slug
    client.force_login(researcher_named("scientist@example.com"))

    found = client.get(
        "/api/v1/judgments/", {"study": study.slug, "source": source, "page_size": 1000}
    ).json()

    ids = [row["id"] for row in found["results"]]
    assert ids.count(judgment.pk) == 1
    assert len(ids) == len(set(ids)) == found["count"]
