"""The results page shows each judge beside the humans (researchers); the study's staff
page shows how far each judge run has got (study managers)."""

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from annotation import services as annotation_services
from annotation.models import Judgment, StudyResults
from judges.models import JudgeCall, JudgeRun
from tests.builders import UserFactory, make_study

from .conftest import judge
from .fans import fans_rate

pytestmark = pytest.mark.django_db(transaction=True, reset_sequences=True)


def test_the_results_page_shows_the_judge_beside_the_humans(
    demo_dataset, researcher, judge_key, judge_server, client
):
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--both-orders", "--rate", "100000", "--items", "30")
    run = JudgeRun.objects.get()
    figures = run.figures["figures"]
    client.force_login(researcher)

    page = client.get(reverse("results-study", args=[study.slug])).content.decode()

    assert 'data-testid="judges-section"' in page and run.label in page
    assert 'data-testid="judge-no-humans"' not in page
    left = figures["biases"]["position"]["judge"]
    shown = [f"{left[key]:.2f}" for key in ("rate", "ci_low", "ci_high")]
    # Each share says what it counts, out of how many verdicts.
    shown += [left["count"], left["n"]]
    assert (
        '<td>Left answer preferred</td><td data-label="Judge">{} [{}, {}] · {} of {}</td>'.format(
            *shown
        )
        in page
    )
    assert 'data-testid="judge-figures-key"' in page
    humans_alpha = figures["agreement"]["fluency"]["alpha"]["humans"]["alpha"]
    assert f'<td>Fluency</td><td data-label="Alpha of the humans">{humans_alpha:.2f} [' in page
    style = figures["style"]["rows"][0]
    assert 'data-testid="judge-style"' in page
    assert (
        f"<td>{style['source']}</td><td>Fluency</td><td>{style['humans']['difference']:.2f} ["
        in page
    )
    assert 'id="judges"' in page
    # The staff list of runs leads to these figures.
    client.force_login(UserFactory(email="root@example.com", is_staff=True, is_superuser=True))
    runs = client.get(reverse("judge-runs")).content.decode()
    figures_link = f'href="{reverse("results-study", args=[study.slug])}#judges"'
    assert figures_link in runs
    client.force_login(researcher)
    # An htmx refresh of the figures above does not carry the section.
    fragment = client.get(reverse("results-study", args=[study.slug]), HTTP_HX_REQUEST="true")
    assert "judges-section" not in fragment.content.decode()


def test_without_human_judgments_the_page_says_not_enough_data(
    demo_dataset, researcher, judge_key, judge_server, client, settings
):
    study = make_study(rounds=(1,))
    judge(judge_server, study, "--items", "12", "--rate", "100000")
    client.force_login(researcher)
    page = client.get(reverse("results-study", args=[study.slug])).content.decode()
    assert 'data-testid="judges-section"' in page and "not enough data" in page
    assert 'data-testid="judge-no-humans"' in page  # and why
    settings.LANGUAGE_CODE = "zh-hans"
    page = client.get(reverse("results-study", args=[study.slug])).content.decode()
    assert "LLM 评审与人类评分者对照" in page and "偏好左侧回答" in page
    # The line under the heading too (its "95 %" once kept it from being translated).
    assert "评审的评分从不计入上面的人类评判" in page and "Judge ratings are never" not in page


def test_the_staff_page_shows_each_run_with_its_failures(
    demo_dataset, manager, judge_key, judge_server, client
):
    study = make_study(rounds=(1,))
    judge_server.script(*["garbage"] * 6)
    with pytest.raises(Exception, match="still missing"):
        judge(judge_server, study, "--items", "1", "--rate", "100000")
    client.force_login(manager)
    page = client.get(reverse("staff-study", args=[study.slug])).content.decode()
    assert 'data-testid="judges-staff-section"' in page
    assert "judge-7b" in page and "0 / 1" in page and "no JSON object" in page


def test_aggregate_json_the_judge_report_and_the_page_agree(
    demo_dataset, researcher, judge_key, judge_server, client
):
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--both-orders", "--rate", "100000", "--items", "24")
    out = io.StringIO()
    call_command("aggregate", "--study", study.slug, "--json", stdout=out)
    printed = json.loads(out.getvalue())
    assert "leaderboard" in printed  # the humans' results document, as before
    (judges,) = printed["judges"]
    run = JudgeRun.objects.get()
    assert judges["figures"] == run.figures["figures"]
    out = io.StringIO()
    call_command("judge_report", "--study", study.slug, "--json", stdout=out)
    assert json.loads(out.getvalue())["judges"][0]["figures"] == judges["figures"]
    client.force_login(researcher)
    page = client.get(reverse("results-study", args=[study.slug])).content.decode()
    longer = judges["figures"]["biases"]["length"]["judge_longer_preferred"]
    shown = [f"{longer[key]:.2f}" for key in ("rate", "ci_low", "ci_high")]
    shown += [longer["count"], longer["n"]]
    assert (
        '<td>Longer answer preferred</td><td data-label="Judge">{} [{}, {}] · {} of {}</td>'.format(
            *shown
        )
        in page
    )
    # The stored results document stays the humans' alone.
    assert "judges" not in StudyResults.objects.get(study=study).payload


def test_the_admin_shows_judge_runs_and_calls_to_read_only(
    demo_dataset, judge_key, judge_server, admin_client
):
    study = make_study(rounds=(1,))
    judge(judge_server, study, "--items", "2", "--rate", "100000")
    call = JudgeCall.objects.first()
    assert admin_client.get(reverse("admin:judges_judgerun_changelist")).status_code == 200
    page = admin_client.get(reverse("admin:judges_judgecall_change", args=[call.pk]))
    assert page.status_code == 200 and escape(call.raw_reply[:20]) in page.content.decode()
    assert admin_client.get(reverse("admin:judges_judgecall_add")).status_code == 403
    response = admin_client.post(
        reverse("admin:judges_judgecall_change", args=[call.pk]), {"status": "failed"}
    )
    assert response.status_code == 403
    call.refresh_from_db()
    assert call.status == "ok"


def test_the_methods_paragraph_states_the_run_in_both_languages(
    demo_dataset, researcher, judge_key, judge_server, client, settings
):
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--items", "10", "--both-orders", "--rate", "100000")
    human_judgments = JudgeRun.objects.get().figures["figures"]["human_judgments"]
    for language, words in (
        ("en", ["judge-7b (temperature 0)", "20 verdicts", "each pair twice"]),
        ("zh", ["judge-7b（温度 0）", "共 20 次有效评判", "左右互换"]),
    ):
        out = io.StringIO()
        call_command("judge_report", "--study", study.slug, "--methods", language, stdout=out)
        for word in [*words, f"{human_judgments} "]:
            assert word in out.getvalue(), (language, word)
    client.force_login(researcher)
    page = client.get(reverse("results-study", args=[study.slug])).content.decode()
    assert 'data-testid="judge-methods">judge-7b (temperature 0)' in page
    with pytest.raises(CommandError):
        call_command("judge_report", "--study", study.slug, "--methods", "fr")


def test_the_beat_recomputes_the_figures_of_runs_whose_study_has_new_judgments(
    demo_dataset, judge_key, judge_server
):
    from judges.tasks import judge_figures_catch_up

    study = make_study(rounds=(1,))
    judge(judge_server, study, "--items", "20", "--rate", "100000")
    run = JudgeRun.objects.get()
    assert run.figures["figures"]["human_judgments"] == 0
    assert judge_figures_catch_up() == []  # nothing new

    fans_rate(study)
    assert judge_figures_catch_up() == [run.pk]
    run.refresh_from_db()
    assert run.figures["figures"]["human_judgments"] > 0
    assert judge_figures_catch_up() == []

    # Staff exclude a fan's judgment: the figures leave it out at the next beat.
    counted = run.figures["figures"]["human_judgments"]
    excluded = Judgment.objects.filter(item__study=study).first()
    annotation_services.judgment_exclude(judgment=excluded, decided_by=None, reason="test")
    assert judge_figures_catch_up() == [run.pk]
    run.refresh_from_db()
    assert run.figures["figures"]["human_judgments"] == counted - 1
    assert judge_figures_catch_up() == []


def test_the_pages_name_the_run_and_its_figures_in_words_and_explain_the_adjusted_difference(
    demo_dataset, researcher, judge_key, judge_server, client, settings
):
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--rate", "100000", "--items", "12")
    client.force_login(researcher)
    results = reverse("results-study", args=[study.slug])

    page = client.get(results).content.decode()
    assert "<h3>judge-7b (Chinese rubric, temperature 0)</h3>" in page and "t=0" not in page
    assert 'data-testid="judge-style-note"' in page
    assert "the intercept of a fit" in page and "beyond what a 1–5 scale allows" in page

    settings.LANGUAGE_CODE = "zh-hans"
    page = client.get(results).content.decode()
    assert "<h3>judge-7b（中文评分标准，温度 0）</h3>" in page
    # The figures' column and the metrics' column are named apart.
    assert "<th>统计量</th><th>评审</th><th>人类</th>" in page
    assert "<th>指标</th><th>人类的 alpha</th>" in page
    assert "可能超出 1–5 分量表所能有的差值范围" in page and "intercept" not in page


def test_a_rank_correlation_of_few_sources_is_shown_without_its_interval(
    demo_dataset, researcher, judge_key, judge_server, client
):
    """The demo ranks four sources: a bootstrap interval of their rank correlation would
    sit on the few values it takes, its bound on the estimate. The page and the report say
    so instead of showing one."""
    study = make_study(rounds=(1,))
    fans_rate(study)
    judge(judge_server, study, "--rate", "100000", "--items", "24")

    rank = JudgeRun.objects.get().figures["figures"]["leaderboard"]["rank_correlation"]
    out = io.StringIO()
    call_command("judge_report", "--study", study.slug, stdout=out)
    client.force_login(researcher)
    page = client.get(reverse("results-study", args=[study.slug])).content.decode()

    assert rank["sources"] == 4 and rank["few_values"] is True
    assert "(no interval: 4 sources, too few values)" in out.getvalue()
    line = re.search(r"<td>Rank correlation of the leaderboards</td><td[^>]*>(.*?)</td>", page)
    assert line and "a rank correlation of 4 sources takes too few values" in line.group(1)
    assert "[" not in line.group(1)
