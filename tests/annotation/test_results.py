"""Derived results: exact to the data, idempotent, and shown only to researchers and staff."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Avg, Count

from annotation import services
from annotation.models import Judgment, Rating, Study, StudyResults
from annotation.results.loading import load_preference_rows, load_ratings
from annotation.simulation import simulate_study
from dialogues.models import Source
from tests.builders import UserFactory, approved_annotator, lease_pair, make_study
from tests.helpers import pair_submission, submit_item

pytestmark = pytest.mark.django_db


@pytest.fixture
def simulated(demo_dataset, settings, luffy):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 50
    # A small study: each compared source has 16 judgments from 6-8 of the 10 annotators
    # (with 6 annotators one of them sometimes did half of a source's work, too little
    # for an interval: `enough_for_interval`).
    settings.CHATANIME_MIN_ANNOTATORS = 3
    settings.CHATANIME_MIN_JUDGMENTS = 5
    study = make_study(
        overlap=2, rounds=(1,), include_diversity=True, ask_human_guess=True, characters=[luffy]
    )
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    study.refresh_from_db()
    made, truth = simulate_study(study=study, annotators=10, seed=3)
    return study, made, truth


def aggregate_json(study) -> dict:
    out = StringIO()
    call_command("aggregate", "--study", study.slug, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_aggregate_json_has_the_documented_shape(simulated):
    study, made, _truth = simulated

    payload = aggregate_json(study)

    assert payload["study"] == study.slug
    assert payload["judgments"] == made
    for metric in ("fluency", "emotional_value", "diversity"):
        figures = payload["agreement"][metric]
        assert set(figures) >= {"alpha_ordinal", "alpha_interval", "ci_low", "ci_high", "n_items"}
        assert -1 <= figures["alpha_ordinal"] <= 1
    for source in Source.objects.all():
        row = payload["leaderboard"][source.slug]["speech_style"]
        assert set(row) == {"mean", "ci_low", "ci_high", "n", "annotators", "cells", "enough_data"}
        assert row["enough_data"] is True, row
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def test_leaderboard_means_and_counts_equal_the_database(simulated):
    study, _made, _truth = simulated
    payload = aggregate_json(study)

    expected = (
        Rating.objects.filter(judgment__item__study=study, judgment__item__kind="pair")
        .values("answer__source__slug", "metric__slug")
        .annotate(mean=Avg("value"), n=Count("pk"))
    )

    assert len(expected) == 4 * 9
    for row in expected:
        figures = payload["leaderboard"][row["answer__source__slug"]][row["metric__slug"]]
        assert figures["n"] == row["n"]
        assert figures["mean"] == pytest.approx(row["mean"], abs=1e-6)


def test_the_recovered_ranking_matches_the_simulated_truth(demo_dataset, settings):
    """On the whole demo set (three characters), the mean over all nine metrics orders
    the sources as the simulated truth does. True levels are 0.6 apart; with about 50
    judgments per compared source the standard error is near 0.1."""
    settings.CHATANIME_BOOTSTRAP_DRAWS = 0
    study = make_study(overlap=2, rounds=(1,))
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    study.refresh_from_db()
    _made, truth = simulate_study(study=study, annotators=6, seed=5)
    payload = aggregate_json(study)
    slugs = dict(Source.objects.values_list("pk", "slug"))

    def overall(slug):
        rows = payload["leaderboard"][slug]
        return sum(rows[m]["mean"] for m in rows if not m.startswith("dimension:")) / 9

    recovered = sorted(payload["leaderboard"], key=lambda s: -overall(s))
    assert recovered == [slugs[s] for s in truth.ranking()]


def test_paired_preferences_and_strengths_are_reported(simulated):
    study, _made, _truth = simulated
    payload = aggregate_json(study)

    for slug in ("aurora-chat", "kumo-7b", "starling-rp"):
        prefs = payload["preferences"][slug]
        assert prefs["wins"] + prefs["ties"] + prefs["losses"] == prefs["n"] > 0
        assert slug in payload["paired_differences"]
    # Every pair is with the reference: strengths would restate the win rates.
    assert payload["bradley_terry"] == {}
    assert payload["bradley_terry_note"] == "restates_win_rates"
    assert payload["human_guess"]["human"]["asked"] > 0
    assert payload["position_bias"]["overall"]["n"] > 0
    assert payload["diversity"]


def test_excluded_judgments_are_left_out(simulated):
    study, made, _truth = simulated
    judgment = Judgment.objects.filter(item__study=study, item__kind="pair").first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")

    payload = aggregate_json(study)

    assert payload["judgments"] == made - 1


def test_recomputing_gives_the_same_figures(simulated):
    study, _made, _truth = simulated

    first = aggregate_json(study)
    second = aggregate_json(study)

    first.pop("seconds"), second.pop("seconds")
    assert first == second
    assert StudyResults.objects.filter(study=study).count() == 1


def test_aggregate_without_a_study_recomputes_every_study(simulated):
    out = StringIO()

    call_command("aggregate", stdout=out)

    assert "judgments, computed in" in out.getvalue()


def test_aggregate_refuses_an_unknown_study(simulated):
    with pytest.raises(CommandError, match="no study"):
        call_command("aggregate", "--study", "nope", stdout=StringIO())


def test_simulation_refuses_a_study_with_real_judgments(alice, study):
    lease = services.assignment_next(user=alice)

    while lease.item.kind != "pair":
        services.assignment_skip(user=alice, token=lease.token, reason="x")
        lease = services.assignment_next(user=alice)
    services.judgment_submit(user=alice, token=lease.token, submission=pair_submission())

    with pytest.raises(CommandError, match="real judgments"):
        call_command(
            "simulate_study", "--study", study.slug, "--annotators", "2", stdout=StringIO()
        )
    assert Judgment.objects.filter(simulated=True).count() == 0


def test_simulated_judgments_are_marked(simulated):
    study, made, _truth = simulated

    assert Judgment.objects.filter(item__study=study, simulated=True).count() == made
    assert not Judgment.objects.filter(item__study=study, simulated=False).exists()


def test_a_submission_queues_a_results_refresh(alice, study, django_capture_on_commit_callbacks):
    from tests.builders import lease_pair

    lease = lease_pair(alice)
    with django_capture_on_commit_callbacks(execute=True):
        services.judgment_submit(user=alice, token=lease.token, submission=pair_submission())

    results = StudyResults.objects.get(study=study)
    assert results.judgments == 1


# Pages ---------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/results/", "/results/{slug}/", "/results/{slug}/methods/"])
def test_results_pages_permission_matrix(client, simulated, researcher, luffy, url):
    study, _made, _truth = simulated
    path = url.format(slug=study.slug)
    annotator = approved_annotator("rater@example.com", [luffy])
    staff = UserFactory(email="boss@example.com", is_staff=True)

    assert client.get(path).status_code == 302
    for user, status in ((annotator, 403), (researcher, 200), (staff, 200)):
        client.force_login(user)
        assert client.get(path).status_code == status


def test_the_results_page_shows_freshness_and_the_leaderboard(client, simulated, researcher):
    study, made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    html = client.get(f"/results/{study.slug}/").content.decode()

    assert f"from {made} judgments" in html
    assert 'id="chart-data"' in html and "starling-rp" in html
    assert "<script>" not in html.replace('<script id="chart-data" type="application/json">', "")


def test_filters_return_a_fragment_for_htmx(client, simulated, researcher, luffy):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    response = client.get(
        f"/results/{study.slug}/",
        {"character": luffy.pk, "dimension": "role_playing"},
        headers={"HX-Request": "true"},
    )

    html = response.content.decode()
    assert "<html" not in html
    assert "Speech style" in html and "Fluency" not in html
    # A character's agreement has no intervals, and the page says so.
    assert 'data-testid="agreement-scope"' in html


def test_the_whole_studys_agreement_carries_no_scope_note(client, simulated, researcher):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    html = client.get(f"/results/{study.slug}/").content.decode()

    assert 'data-testid="agreement-scope"' not in html


def test_the_chinese_page_heads_its_intervals_in_chinese(client, simulated, researcher):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    client.cookies["django_language"] = "zh-hans"

    html = client.get(f"/results/{study.slug}/").content.decode()

    assert "95% 置信区间" in html
    assert "95% CI" not in html and "%%" not in html
    chart = json.loads(
        html.split('id="chart-data" type="application/json">', 1)[1].split("<", 1)[0]
    )
    assert chart["ciLabel"] == "须线：95% 置信区间"  # the bars have intervals here


def test_a_study_without_results_says_so(client, study, researcher):
    client.force_login(researcher)

    html = client.get(f"/results/{study.slug}/").content.decode()

    assert 'data-testid="no-results"' in html
    assert "still a draft" not in html  # open: annotators can rate


def test_a_draft_without_results_says_it_is_not_open_yet(client, demo_dataset, researcher):
    from dialogues.models import Character, Source

    draft = services.study_create(
        name="Draft",
        reference=Source.objects.get(kind="human"),
        compared=list(Source.objects.filter(kind="llm")),
        characters=list(Character.objects.all()),
    )
    client.force_login(researcher)

    html = client.get(f"/results/{draft.slug}/").content.decode()

    assert "This study is still a draft: a study manager opens it" in html


def test_a_study_with_only_diversity_sets_judged_has_results(
    client, demo_dataset, researcher, luffy
):
    """Sets come first, so a new study's first judgments are all sets."""
    from annotation.models import ItemKind

    study = make_study(include_diversity=True, characters=[luffy])
    annotator = approved_annotator("first@example.com", [luffy])
    lease = services.assignment_next(user=annotator)
    assert lease.item.kind == ItemKind.DIVERSITY
    submit_item(annotator, lease, value=4)

    results = services.study_recompute(study=study)

    assert results.judgments == 1
    assert results.payload["leaderboard"] == {}
    assert results.payload["leaderboard_by_round"] == {"1": {}, "2": {}}
    [source] = results.payload["diversity"]
    assert results.payload["diversity"][source]["mean"] == 4
    client.force_login(researcher)
    assert client.get(f"/results/{study.slug}/").status_code == 200


def test_only_staff_can_ask_for_a_recompute(client, simulated, researcher):
    study, _made, _truth = simulated
    client.force_login(researcher)

    assert client.post(f"/results/{study.slug}/refresh/").status_code == 403

    client.force_login(UserFactory(email="boss@example.com", is_staff=True))
    response = client.post(f"/results/{study.slug}/refresh/")
    assert response.status_code == 302
    assert StudyResults.objects.filter(study=study).exists()


def test_per_character_means_equal_the_database(simulated, luffy):
    study, _made, _truth = simulated
    payload = aggregate_json(study)

    expected = (
        Rating.objects.filter(
            judgment__item__study=study,
            judgment__item__kind="pair",
            judgment__item__character=luffy,
        )
        .values("answer__source__slug", "metric__slug")
        .annotate(mean=Avg("value"), n=Count("pk"))
    )

    board = payload["leaderboard_by_character"][str(luffy.pk)]
    for row in expected:
        figures = board[row["answer__source__slug"]][row["metric__slug"]]
        assert figures["n"] == row["n"] and figures["mean"] == pytest.approx(row["mean"], abs=1e-6)


@pytest.mark.integration
def test_the_binary_copy_reader_gives_the_same_ratings_as_the_plain_query(
    postgres, demo_dataset, settings
):
    """On PostgreSQL the ratings are read through binary COPY plus three small lookups;
    row for row they must be what the plain one-row-per-rating query returns, for pairs of
    both rounds and diversity sets, without excluded judgments or gold items."""
    from annotation.results.loading import load_ratings, load_ratings_rows
    from annotation.stats.arrays import COLUMNS

    study = make_study(overlap=2, include_diversity=True)
    simulate_study(study=study, annotators=6, seed=7)
    excluded = Judgment.objects.filter(item__study=study, item__kind="pair").first()
    services.judgment_exclude(judgment=excluded, decided_by=None, reason="test")

    def rows(data):
        return sorted(zip(*(data[name].tolist() for name in COLUMNS), strict=True))

    fast, plain = rows(load_ratings(study)), rows(load_ratings_rows(study))

    assert fast == plain
    judgment_column = COLUMNS.index("judgment")
    assert excluded.pk not in {row[judgment_column] for row in fast}
    assert {row[COLUMNS.index("is_pair")] for row in fast} == {0, 1}
    assert {row[COLUMNS.index("round")] for row in fast} >= {1, 2}
    assert (
        len(fast)
        == Rating.objects.filter(judgment__item__study=study, judgment__excluded=False).count()
        - Rating.objects.filter(
            judgment__item__study=study, judgment__excluded=False, judgment__item__is_gold=True
        ).count()
    )


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_the_refresh_runs_beside_the_request_not_in_it(
    alice, study, settings, monkeypatch
):
    """`make run` (no Redis, tasks in-process): the annotator's request only notes the
    study; a background thread recomputes it, once the submission is committed."""
    import threading

    from annotation.services import results
    from common import background
    from tests.builders import lease_pair

    settings.CHATANIME_TASKS_IN_BACKGROUND = True
    refresher = background.Refresher(delay_seconds=0)
    monkeypatch.setattr(background, "_refresher", refresher)
    recomputed_on = []
    real_recompute = results.study_recompute

    def recompute(*, study):
        recomputed_on.append(threading.current_thread())
        return real_recompute(study=study)

    monkeypatch.setattr(results, "study_recompute", recompute)
    monkeypatch.setattr(services, "study_recompute", recompute)

    lease = lease_pair(alice)
    services.judgment_submit(user=alice, token=lease.token, submission=pair_submission())
    refresher.wait_idle()

    assert recomputed_on and threading.current_thread() not in recomputed_on
    assert StudyResults.objects.get(study=study).judgments == 1


def test_a_refresh_replaces_the_study_results_in_place(simulated):
    study, made, _truth = simulated
    services.results_refresh(study=study)
    StudyResults.objects.filter(study=study).update(judgments=0, payload={})

    services.results_refresh(study=study)

    (results,) = StudyResults.objects.filter(study=study)
    assert results.judgments == made and results.payload["judgments"] == made


def test_preferences_name_the_sources_of_the_answers_chosen(simulated):
    study, _made, _truth = simulated
    data = load_ratings(study)
    nothing = {name: column[:0] for name, column in data.items()}

    rows = load_preference_rows(study, data)

    # Without the ratings to take them from, the sources are read by answer.
    assert rows == load_preference_rows(study, nothing)
    pairs = Judgment.objects.filter(study=study, item__kind="pair").order_by("pk")
    assert len(rows) == pairs.count() > 0
    for row, judgment in zip(rows, pairs, strict=True):
        preferred = judgment.preferred_answer
        guess = judgment.human_guess
        assert row[2] == (preferred.source_id if preferred else None)
        assert row[3] == judgment.is_tie and row[5] == judgment.human_guess_asked
        assert row[4] == (guess.source_id if guess else None)
        assert row[8] == judgment.annotator.annotator_profile.pseudonym
    assert any(row[2] for row in rows) and any(row[4] for row in rows)


def test_style_adjusted_differences_are_fitted_on_the_answers_lengths(
    client, simulated, researcher
):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    payload = aggregate_json(study)
    reference = study.reference_source_id

    figures = payload["style_adjusted_differences"]

    longer: dict[str, list[int]] = {}
    for judgment in Judgment.objects.filter(item__study=study, item__kind="pair").counted():
        lengths = {
            slot.answer.source: len(slot.answer.text)
            for slot in judgment.item.slots.select_related("answer__source")
        }
        (compared,) = [s for s in lengths if s.pk != reference]
        (human,) = [s for s in lengths if s.pk == reference]
        longer.setdefault(compared.slug, []).append(lengths[compared] - lengths[human])
    assert set(figures) == set(longer) == set(payload["paired_differences"])
    for slug, per_metric in figures.items():
        assert set(per_metric) == set(payload["paired_differences"][slug])
        for figure in per_metric.values():
            expected = sum(longer[slug]) / len(longer[slug])
            assert figure["mean_length_difference"] == pytest.approx(expected, abs=1e-6)
            assert figure["n"] == len(longer[slug])
            if figure["enough_data"]:
                assert figure["ci_low"] <= figure["adjusted"] <= figure["ci_high"]
    client.force_login(researcher)
    html = client.get(f"/results/{study.slug}/").content.decode()
    assert 'data-testid="style-adjusted"' in html


def test_the_results_page_takes_the_screens_width_for_its_leaderboard(
    client, simulated, researcher
):
    # Nine metrics and three dimensions with intervals do not fit the 960 px of a form page.
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    html = client.get(f"/results/{study.slug}/").content.decode()

    assert '<main class="wide">' in html
    assert '<main class="wide">' not in client.get("/results/").content.decode()


def test_the_human_fans_are_named_in_the_pages_language(client, simulated, researcher):
    """The human source's name is the platform's own English words, stored as data: the
    Chinese page and methods paragraph name it in Chinese, in every table."""
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    english = client.get(f"/results/{study.slug}/").content.decode()
    client.cookies["django_language"] = "zh-hans"

    chinese = client.get(f"/results/{study.slug}/").content.decode()
    methods = client.get(f"/results/{study.slug}/methods/").content.decode()

    assert "Human fans" in english
    assert "Human fans" not in chinese and "人类粉丝" in chinese
    # The methods page gives the paragraph in both languages: the English one keeps its name.
    assert "以 人类粉丝 为参照" in methods and "以 Human fans 为参照" not in methods
    assert "语言风格" in methods and "说话风格" not in methods


# Filters and empty states --------------------------------------------------------------


def leaderboard_of(html: str) -> str:
    """The leaderboard table of a results page ("" when the page shows none)."""
    if '<table class="leaderboard">' not in html:
        return ""
    return html.split('<table class="leaderboard">', 1)[1].split("</table>", 1)[0]


def select_of(html: str, name: str) -> str:
    """The options of the filter `name` of a results page."""
    return html.split(f'<select name="{name}">', 1)[1].split("</select>", 1)[0]


@pytest.fixture
def luffy_judged(demo_dataset, luffy, natsume):
    """Two characters and two rounds; only Luffy's pairs are judged."""
    study = make_study(overlap=2, rounds=(1, 2), characters=[luffy, natsume])
    for email in ("first@example.com", "second@example.com"):
        annotator = approved_annotator(email, [luffy])
        for _ in range(3):
            submit_item(annotator, lease_pair(annotator))
    services.study_recompute(study=study)
    return study


def test_the_round_filter_offers_only_the_studys_rounds(
    client, simulated, luffy_judged, researcher
):
    one_round, _made, _truth = simulated
    services.results_refresh(study=one_round)
    client.force_login(researcher)

    rounds = select_of(client.get(f"/results/{one_round.slug}/").content.decode(), "round")
    both = select_of(client.get(f"/results/{luffy_judged.slug}/").content.decode(), "round")

    assert '<option value="1"' in rounds and '<option value="2"' not in rounds
    assert "Both" not in rounds and "All" in rounds
    assert '<option value="1"' in both and '<option value="2"' in both and "Both" in both


@pytest.mark.parametrize(
    ("query", "notice"),
    [
        ({"round": "2"}, "This study has no round “2”: the figures are for all its rounds."),
        ({"round": "3"}, "This study has no round “3”"),
        ({"character": "999"}, "This study has no character “999”"),
        ({"character": "luffy"}, "This study has no character “luffy”"),
        ({"dimension": "charm"}, "There is no dimension “charm”"),
    ],
)
def test_a_filter_value_the_study_lacks_is_named_and_changes_nothing(
    client, simulated, researcher, query, notice
):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    whole = client.get(f"/results/{study.slug}/").content.decode()

    html = client.get(f"/results/{study.slug}/", query).content.decode()
    fragment = client.get(
        f"/results/{study.slug}/", query, headers={"HX-Request": "true"}
    ).content.decode()

    assert notice in html and notice in fragment
    assert "<td>" in leaderboard_of(whole) and leaderboard_of(html) == leaderboard_of(whole)
    assert 'data-testid="filter-notice"' not in whole


def test_a_round_the_study_lacks_is_not_hidden_behind_a_character(
    client, simulated, researcher, luffy
):
    """`?character=1&round=2` on a one-round study: the round is named, not ignored."""
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    character = client.get(f"/results/{study.slug}/", {"character": luffy.pk}).content.decode()

    html = client.get(f"/results/{study.slug}/", {"character": luffy.pk, "round": 2})

    assert "This study has no round “2”" in html.content.decode()
    assert leaderboard_of(html.content.decode()) == leaderboard_of(character)
    assert "selected" not in select_of(html.content.decode(), "round")


def test_a_character_in_the_studys_only_round_is_that_characters_figures(
    client, simulated, researcher, luffy
):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    character = client.get(f"/results/{study.slug}/", {"character": luffy.pk}).content.decode()

    html = client.get(f"/results/{study.slug}/", {"character": luffy.pk, "round": 1})

    text = html.content.decode()
    assert 'data-testid="filter-notice"' not in text
    assert leaderboard_of(text) == leaderboard_of(character) and "<td>" in leaderboard_of(text)
    assert '<option value="1" selected>' in select_of(text, "round")


def test_one_character_in_one_round_is_refused_clearly(client, luffy_judged, researcher, luffy):
    """The results hold figures per character and per round, not both at once: the page
    says which figures it shows instead of silently dropping the round."""
    client.force_login(researcher)
    character = client.get(f"/results/{luffy_judged.slug}/", {"character": luffy.pk})

    html = client.get(
        f"/results/{luffy_judged.slug}/", {"character": luffy.pk, "round": 1}
    ).content.decode()

    assert (
        "not for one character in one round: the figures are for "
        "蒙奇·D·路飞 · Monkey D. Luffy in all rounds." in html
    )
    assert leaderboard_of(html) == leaderboard_of(character.content.decode())
    assert "<td>" in leaderboard_of(html)
    assert "selected" not in select_of(html, "round")


def test_a_selection_without_judgments_says_so_instead_of_empty_tables(
    client, luffy_judged, researcher, natsume
):
    client.force_login(researcher)

    html = client.get(f"/results/{luffy_judged.slug}/", {"character": natsume.pk})

    text = html.content.decode()
    assert 'data-testid="empty-selection"' in text
    assert "No judgments for this selection." in text
    assert leaderboard_of(text) == "" and 'id="chart-data"' not in text
    assert 'data-testid="agreement"' not in text


def test_a_recompute_without_judgments_shows_no_judgments_yet(client, study, manager):
    client.force_login(manager)
    assert client.post(f"/results/{study.slug}/refresh/").status_code == 302

    html = client.get(f"/results/{study.slug}/").content.decode()
    client.cookies["django_language"] = "zh-hans"
    chinese = client.get(f"/results/{study.slug}/").content.decode()

    assert 'data-testid="no-judgments"' in html and "No judgments yet." in html
    assert leaderboard_of(html) == "" and 'id="chart-data"' not in html
    assert '<canvas id="radar"' not in html and 'data-testid="agreement"' not in html
    assert "Computed just now from 0 judgments" in html and "0 minutes" not in html
    assert "刚刚根据 0 条评判计算" in chinese and "0 分钟" not in chinese
    assert "还没有评判。" in chinese


def test_the_time_since_a_recompute_reads_just_now_then_minutes_ago(client, simulated, researcher):
    from datetime import timedelta

    from django.utils import timezone

    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    def page(path):  # `timesince` puts a no-break space between number and unit
        return client.get(path).content.decode().replace("\xa0", " ")

    assert ">just now<" in page("/results/")
    StudyResults.objects.filter(study=study).update(
        computed_at=timezone.now() - timedelta(minutes=5, seconds=3)
    )
    assert ">5 minutes ago<" in page("/results/")
    assert "Computed 5 minutes ago from" in page(f"/results/{study.slug}/")
    client.cookies["django_language"] = "zh-hans"
    assert ">5 分钟前<" in page("/results/")


def test_the_filter_notices_are_in_chinese(client, simulated, researcher):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)
    client.cookies["django_language"] = "zh-hans"

    html = client.get(f"/results/{study.slug}/", {"round": 3}).content.decode()

    assert "本评测没有轮次“3”：下面是所有轮次的结果。" in html
    assert "This study" not in html


def test_the_downloads_offer_a_csv_excel_reads_and_it_starts_with_the_bom(
    client, simulated, researcher
):
    study, _made, _truth = simulated
    services.results_refresh(study=study)
    client.force_login(researcher)

    page = client.get(f"/results/{study.slug}/").content.decode()
    [link] = re.findall(r'<a href="([^"]+)" download data-testid="csv-excel">', page)
    response = client.get(link.replace("&amp;", "&"))

    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith("\ufeff".encode())
