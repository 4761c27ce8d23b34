"""A study's panel settings through the service: what is accepted, what is refused with the
setting named and nothing changed, and the audit row every change leaves."""

import pytest

from annotation.models import AuditAction, AuditEvent
from annotation.templatetags.annotation_extras import CHANGE_LABELS
from panels import services
from panels.models import PROLIFIC_COMPLETION_URL, PanelStudy
from tests.builders import make_panel_study

pytestmark = pytest.mark.django_db

GENERIC = {
    "provider": "generic",
    "id_parameter": "uid",
    "completion_url_template": "https://www.credamo.com/back?code={code}&pid={pid}",
    "completion_code": "DONE1",
    "screen_out_code": "OUT1",
    "items_per_participant": 8,
}


def test_a_prolific_study_gets_prolifics_id_parameter_and_completion_page(study):
    panel = make_panel_study(study)

    assert panel.id_parameter == "PROLIFIC_PID"
    assert panel.completion_url_template == PROLIFIC_COMPLETION_URL
    assert (panel.minutes, panel.places, panel.quiz, panel.is_open) == (60, 0, False, True)


def test_a_generic_panel_keeps_its_own_parameter_and_template(study):
    panel = services.panel_configure(study=study, actor=None, **GENERIC)

    assert panel.id_parameter == "uid"
    assert panel.completion_url_template.endswith("code={code}&pid={pid}")


def test_a_change_touches_only_the_settings_given_and_is_audited(study, manager):
    make_panel_study(study)

    panel = services.panel_configure(study=study, actor=manager, places=30, is_open=False)

    assert (panel.places, panel.is_open, panel.completion_code) == (30, False, "C1A2B3")
    event = AuditEvent.objects.filter(action=AuditAction.PANEL_SETTINGS).first()
    assert event.actor == manager and event.study == study
    assert event.before == {"places": 0, "is_open": True}
    assert event.after == {"places": 30, "is_open": False}


def test_the_same_settings_again_change_nothing_and_leave_no_audit_row(study):
    make_panel_study(study)
    count = AuditEvent.objects.filter(action=AuditAction.PANEL_SETTINGS).count()

    make_panel_study(study)

    assert AuditEvent.objects.filter(action=AuditAction.PANEL_SETTINGS).count() == count


def test_every_setting_the_audit_records_has_a_name_in_the_trail():
    assert sorted(set(services.SETTINGS) - set(CHANGE_LABELS)) == []


@pytest.mark.parametrize(
    ("changes", "setting"),
    [
        ({"provider": "mturk"}, "provider"),
        ({"completion_code": ""}, "completion_code"),
        ({"completion_code": "has space"}, "completion_code"),
        ({"completion_code": "X" * 65}, "completion_code"),
        ({"screen_out_code": "完成"}, "screen_out_code"),
        ({"failed_checks_code": "a/b"}, "failed_checks_code"),
        ({"screen_out_code": "C1A2B3"}, "screen_out_code"),
        ({"items_per_participant": 0}, "items_per_participant"),
        ({"items_per_participant": "10"}, "items_per_participant"),
        ({"minutes": 0}, "minutes"),
        ({"minutes": 100_000}, "minutes"),
        ({"places": -1}, "places"),
        ({"skips_per_participant": -1}, "skips_per_participant"),
        ({"skips_per_participant": "3"}, "skips_per_participant"),
        ({"skips_per_participant": 10_001}, "skips_per_participant"),
        ({"quiz": "yes"}, "quiz"),
        ({"id_parameter": "uid"}, "id_parameter"),
        ({"completion_url_template": "https://panel.example/back"}, "completion_url_template"),
        ({"completion_url_template": "ftp://panel.example/{code}"}, "completion_url_template"),
        (
            {"completion_url_template": "https://p.example/{code}/{email}"},
            "completion_url_template",
        ),
        ({"completion_url_template": "https://p.example/{code!r}"}, "completion_url_template"),
        ({"completion_url_template": "https://p.example/{code"}, "completion_url_template"),
        ({"completion_url_template": "https://p.example/ {code}"}, "completion_url_template"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_wrong_setting_is_refused_by_name_and_changes_nothing(study, changes, setting):
    panel = make_panel_study(study)
    before = PanelStudy.objects.values().get(pk=panel.pk)
    audited = AuditEvent.objects.count()

    with pytest.raises(services.PanelError) as refused:
        services.panel_configure(study=study, actor=None, **changes)

    assert refused.value.code == setting
    assert refused.value.message
    assert PanelStudy.objects.values().get(pk=panel.pk) == before
    assert AuditEvent.objects.count() == audited


@pytest.mark.parametrize("missing", ["completion_code", "screen_out_code", "items_per_participant"])
def test_a_new_panel_study_needs_its_codes_and_size(study, missing):
    wanted = {key: value for key, value in GENERIC.items() if key != missing}

    with pytest.raises(services.PanelError) as refused:
        services.panel_configure(study=study, actor=None, **wanted)

    assert refused.value.code == missing
    assert not PanelStudy.objects.exists()


@pytest.mark.parametrize("missing", ["id_parameter", "completion_url_template"])
def test_a_generic_panel_must_name_its_parameter_and_template(study, missing):
    wanted = {key: value for key, value in GENERIC.items() if key != missing}

    with pytest.raises(services.PanelError) as refused:
        services.panel_configure(study=study, actor=None, **wanted)

    assert refused.value.code == missing
    assert not PanelStudy.objects.exists()


def test_switching_back_to_prolific_restores_its_parameter_and_page(study):
    services.panel_configure(study=study, actor=None, **GENERIC)

    panel = services.panel_configure(study=study, actor=None, provider="prolific")

    assert panel.id_parameter == "PROLIFIC_PID"
    assert panel.completion_url_template == PROLIFIC_COMPLETION_URL


def test_the_admin_form_refuses_what_the_service_refuses(study):
    from panels.forms import PanelStudyForm

    form = PanelStudyForm(
        data={
            "study": study.pk,
            "provider": "generic",
            "id_parameter": "uid",
            "completion_url_template": "https://panel.example/back",
            "completion_code": "DONE1",
            "screen_out_code": "OUT1",
            "failed_checks_code": "",
            "items_per_participant": 8,
            "minutes": 60,
            "places": 0,
            "skips_per_participant": 3,
        }
    )

    assert not form.is_valid()
    assert "{code}" in form.errors["completion_url_template"][0]


@pytest.mark.parametrize(
    ("template", "site"),
    [
        ("https://app.prolific.com/submissions/complete?cc={code}", "https://app.prolific.com/"),
        ("https://www.credamo.com/s/abc?code={code}", "https://www.credamo.com/"),
        ("{code}", ""),
    ],
)
def test_the_panels_site_is_the_address_of_its_completion_link(template, site):
    from panels.models import PanelStudy

    assert PanelStudy(completion_url_template=template).panel_site == site
