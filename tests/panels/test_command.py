"""`manage.py study_panel`: every option sets its setting, the join link is printed for the
panel, and bad input names the option and changes nothing."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AuditEvent
from panels.models import PanelStudy

pytestmark = pytest.mark.django_db

PROLIFIC = [
    "--provider", "prolific",
    "--completion-code", "C1A2B3",
    "--screen-out-code", "SCREENED",
    "--items", "12",
]  # fmt: skip


def run(*words) -> str:
    out = StringIO()
    call_command("study_panel", *words, stdout=out)
    return out.getvalue()


def test_every_option_sets_its_setting(study):
    run(
        study.slug,
        "--provider", "generic",
        "--id-parameter", "sojumpparm",
        "--completion-url", "https://www.wjx.cn/back?c={code}&u={pid}",
        "--completion-code", "DONE",
        "--screen-out-code", "OUT",
        "--failed-checks-code", "FAIL",
        "--items", "20",
        "--minutes", "45",
        "--places", "300",
        "--skips", "0",
        "--quiz",
        "--open",
    )  # fmt: skip

    panel = PanelStudy.objects.get(study=study)
    assert (panel.provider, panel.id_parameter) == ("generic", "sojumpparm")
    assert panel.completion_url_template == "https://www.wjx.cn/back?c={code}&u={pid}"
    assert (panel.completion_code, panel.screen_out_code, panel.failed_checks_code) == (
        "DONE",
        "OUT",
        "FAIL",
    )
    assert (panel.items_per_participant, panel.minutes, panel.places) == (20, 45, 300)
    assert panel.skips_per_participant == 0
    assert panel.quiz is True and panel.is_open is True


def test_no_quiz_and_pause_turn_those_off_and_leave_the_rest(study):
    run(study.slug, *PROLIFIC, "--quiz", "--open")

    run(study.slug, "--no-quiz", "--pause")

    panel = PanelStudy.objects.get(study=study)
    assert panel.quiz is False and panel.is_open is False
    assert panel.items_per_participant == 12


def test_prolific_gets_the_join_link_with_prolifics_placeholders(study, settings):
    settings.SITE_URL = "https://rate.example.org"

    out = run(study.slug, *PROLIFIC)

    assert (
        f"https://rate.example.org/join/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    ) in out
    assert "paused" in out


def test_a_paused_study_says_its_link_turns_everyone_away_until_opened(study):
    paused = run(study.slug, *PROLIFIC)
    opened = run(study.slug, "--open")

    assert (
        f"turns everyone away, test ids included, until manage.py study_panel {study.slug} --open"
        in paused
    )
    assert "turns everyone away" not in opened


def test_a_generic_panel_gets_the_join_link_with_its_id_parameter(study, settings):
    settings.SITE_URL = "https://rate.example.org"

    out = run(
        study.slug, "--provider", "generic", "--id-parameter", "uid",
        "--completion-url", "https://panel.example/{code}",
        "--completion-code", "A", "--screen-out-code", "B", "--items", "5",
    )  # fmt: skip

    assert f"https://rate.example.org/join/{study.slug}/?uid=" in out


@pytest.mark.parametrize(
    ("words", "option"),
    [
        (["--items", "0"], "--items"),
        (["--items", "-3"], "--items"),
        (["--items", "ten"], "--items"),
        (["--minutes", "1.5"], "--minutes"),
        (["--places", "²"], "--places"),
        (["--completion-code", "two words"], "--completion-code"),
        (["--screen-out-code", "C1A2B3"], "--screen-out-code"),
        (["--failed-checks-code", "x" * 65], "--failed-checks-code"),
        (["--completion-url", "https://p.example/none"], "--completion-url"),
        (["--id-parameter", "uid"], "--id-parameter"),
        (["--provider", "generic"], "--id-parameter"),
        (["--provider", "mturk"], "--provider"),
        (["--quiz", "--no-quiz"], "--no-quiz"),
        (["--open", "--pause"], "--pause"),
    ],
)
def test_bad_input_names_the_option_and_changes_nothing(study, words, option):
    run(study.slug, *PROLIFIC)
    before = PanelStudy.objects.values().get(study=study)
    audited = AuditEvent.objects.count()

    with pytest.raises(CommandError, match=option):
        run(study.slug, *words)

    assert PanelStudy.objects.values().get(study=study) == before
    assert AuditEvent.objects.count() == audited


@pytest.mark.parametrize("missing", ["--completion-code", "--screen-out-code", "--items"])
def test_a_new_panel_study_without_a_required_option_is_refused(study, missing):
    words = list(PROLIFIC)
    at = words.index(missing)
    del words[at : at + 2]

    with pytest.raises(CommandError, match=missing):
        run(study.slug, *words)

    assert not PanelStudy.objects.exists()


def test_an_unknown_study_is_refused(db):
    with pytest.raises(CommandError, match="no-such-study"):
        run("no-such-study", *PROLIFIC)

    assert not PanelStudy.objects.exists()


def test_a_change_of_skips_says_whom_it_reaches(study):
    run(study.slug, *PROLIFIC)

    out = run(study.slug, "--skips", "1")

    assert "Skips allowed: 1 per participant, from the next one to choose" in out
    assert "Skips allowed" not in run(study.slug, "--places", "5")
