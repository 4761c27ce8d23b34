"""The attention-check setting (`check_positions`) through the service, `study_panel
--checks` and the admin: what is accepted, and what is refused with the setting named and
nothing changed. Checks need a failed-checks code. Staff set an unclear check aside from
the admin too."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import AuditAction, AuditEvent
from panels import checks, services
from panels.forms import PanelStudyForm
from panels.models import PanelStudy
from tests.builders import make_panel_study

pytestmark = pytest.mark.django_db


def with_checks(study, positions=(3, 8), **settings):
    return make_panel_study(
        study, check_positions=list(positions), failed_checks_code="FAILED9", **settings
    )


def test_checks_are_set_with_a_failed_checks_code_and_audited(study):
    make_panel_study(study)

    panel = services.panel_configure(
        study=study, actor=None, check_positions=[3, 8], failed_checks_code="FAILED9"
    )

    assert panel.check_positions == [3, 8]
    event = AuditEvent.objects.filter(action=AuditAction.PANEL_SETTINGS).first()
    assert event.before == {"check_positions": [], "failed_checks_code": ""}
    assert event.after == {"check_positions": [3, 8], "failed_checks_code": "FAILED9"}


def test_checks_are_cleared_with_an_empty_list(study):
    with_checks(study)

    panel = services.panel_configure(study=study, actor=None, check_positions=[])

    assert panel.check_positions == []


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"check_positions": "3,8"}, "check_positions"),
        ({"check_positions": [3, "8"]}, "check_positions"),
        ({"check_positions": [True]}, "check_positions"),
        ({"check_positions": [3.0]}, "check_positions"),
        ({"check_positions": [0]}, "check_positions"),
        ({"check_positions": [11]}, "check_positions"),
        ({"check_positions": [3, 3]}, "check_positions"),
        ({"check_positions": [8, 3]}, "check_positions"),
        ({"check_positions": [1, 2, 3, 4, 5, 6]}, "check_positions"),
        ({"items_per_participant": 5}, "check_positions"),
        ({"failed_checks_code": ""}, "failed_checks_code"),
    ],
)
def test_a_wrong_check_setting_is_refused_by_name_and_changes_nothing(study, changes, setting):
    panel = with_checks(study, items_per_participant=10)
    before = PanelStudy.objects.values().get(pk=panel.pk)
    audited = AuditEvent.objects.count()

    with pytest.raises(services.PanelError) as refused:
        services.panel_configure(study=study, actor=None, **changes)

    assert refused.value.code == setting
    assert refused.value.message
    assert PanelStudy.objects.values().get(pk=panel.pk) == before
    assert AuditEvent.objects.count() == audited


def test_checks_without_a_failed_checks_code_are_refused_naming_it(study):
    panel = make_panel_study(study)

    with pytest.raises(services.PanelError) as refused:
        services.panel_configure(study=study, actor=None, check_positions=[3])

    assert refused.value.code == "failed_checks_code"
    panel.refresh_from_db()
    assert panel.check_positions == []


def test_the_bank_holds_a_check_for_every_position_allowed():
    # The most positions the setting allows, each shown a check of its own.
    positions = list(range(1, len(checks.BANK) + 1))
    shown = {
        checks.check_shown(participant_id=7, position=p, positions=positions).key for p in positions
    }
    assert len(shown) == len(positions)


# The command ---------------------------------------------------------------------------------


def run(*words) -> str:
    out = StringIO()
    call_command("study_panel", *words, stdout=out)
    return out.getvalue()


def test_the_command_sets_and_clears_the_checks(study):
    make_panel_study(study)

    run(study.slug, "--checks", "3, 8", "--failed-checks-code", "FAILED9")
    assert PanelStudy.objects.get(study=study).check_positions == [3, 8]

    run(study.slug, "--checks", "")
    assert PanelStudy.objects.get(study=study).check_positions == []


@pytest.mark.parametrize(
    ("words", "option"),
    [
        (["--checks", "3,x"], "--checks"),
        (["--checks", "3,,8"], "--checks"),
        (["--checks", "-3"], "--checks"),
        (["--checks", "8,3"], "--checks"),
        (["--checks", "3,11"], "--checks"),
        (["--checks", "3"], "--failed-checks-code"),
    ],
)
def test_bad_checks_name_the_option_and_change_nothing(study, words, option):
    make_panel_study(study)
    before = PanelStudy.objects.values().get(study=study)
    audited = AuditEvent.objects.count()

    with pytest.raises(CommandError, match=option):
        run(study.slug, *words)

    assert PanelStudy.objects.values().get(study=study) == before
    assert AuditEvent.objects.count() == audited


# The admin -----------------------------------------------------------------------------------


def admin_data(study, **changes):
    return {
        "study": study.pk,
        "provider": "prolific",
        "id_parameter": "PROLIFIC_PID",
        "completion_url_template": "https://app.prolific.com/submissions/complete?cc={code}",
        "completion_code": "C1A2B3",
        "screen_out_code": "SCREENED",
        "failed_checks_code": "FAILED9",
        "items_per_participant": 10,
        "minutes": 60,
        "places": 0,
        "skips_per_participant": 3,
        "check_positions": "3, 8",
        **changes,
    }


def test_the_admin_form_reads_the_checks_as_typed(study):
    form = PanelStudyForm(data=admin_data(study))

    assert form.is_valid(), form.errors
    assert form.cleaned_data["check_positions"] == [3, 8]
    shown = PanelStudyForm(instance=with_checks(study))
    assert 'value="3, 8"' in str(shown["check_positions"])


def test_the_admin_form_says_the_reward_is_in_pence_or_cents(study):
    """Typed as pounds, a whole number would be pence: the form says which it reads."""
    shown = str(PanelStudyForm()["reward_minor_units"].label_tag())
    shown += str(PanelStudyForm()["reward_minor_units"].help_text)
    assert "in pence or cents" in shown and "150 is 1.50" in shown
    form = PanelStudyForm(data=admin_data(study, reward_minor_units="150"))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["reward_minor_units"] == 150


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"check_positions": "3, x"}, "check_positions"),
        ({"check_positions": "3, 30"}, "check_positions"),
        ({"failed_checks_code": ""}, "failed_checks_code"),
    ],
)
def test_the_admin_form_refuses_what_the_service_refuses(study, changes, field):
    form = PanelStudyForm(data=admin_data(study, **changes))

    assert not form.is_valid()
    assert form.errors[field]


def test_staff_set_an_unclear_check_aside_from_the_admin(client, study):
    panel = with_checks(study)
    payer = get_user_model().objects.create_superuser("payer", "payer@example.com")
    client.force_login(payer)
    url = reverse("admin:panels_panelstudy_changelist")
    key = checks.BANK[2].key
    chosen = {"action": "void_check", "_selected_action": [panel.pk]}

    asked = client.post(url, chosen)
    assert asked.status_code == 200 and key.encode() in asked.content
    refused = client.post(url, {**chosen, "apply": "1", "check": key, "reason": ""})
    assert refused.status_code == 200
    assert not AuditEvent.objects.filter(action=AuditAction.PANEL_CHECK_VOID).exists()
    done = client.post(url, {**chosen, "apply": "1", "check": key, "reason": "two answers fit"})

    assert done.status_code == 302
    panel.refresh_from_db()
    assert panel.voided_checks == [key]
    event = AuditEvent.objects.get(action=AuditAction.PANEL_CHECK_VOID)
    assert event.actor == payer and event.note == "two answers fit"
    page = client.get(reverse("admin:panels_panelstudy_change", args=[panel.pk]))
    assert page.status_code == 200 and key.encode() in page.content
