"""The panel id is for paying people and nothing else: it never reaches a research export
or a participant's page, and in the admin only superusers (who pay) see it."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import ProfileStatus, Qualification, QualificationStatus
from panels import services
from tests.builders import PROLIFIC_PID, lease_pair, make_panel_study, panel_participant
from tests.helpers import full_ratings

pytestmark = pytest.mark.django_db


@pytest.fixture
def participant_who_rated(study, luffy):
    """A panel participant approved by hand (the panel's own screening comes later) who
    gave one judgment."""
    participant = panel_participant(make_panel_study(study))
    profile = annotation_services.consent_give(user=participant.user)
    Qualification.objects.create(
        profile=profile, character=luffy, status=QualificationStatus.APPROVED
    )
    profile.status = ProfileStatus.APPROVED
    profile.save()
    lease = lease_pair(participant.user)
    annotation_services.judgment_submit(
        user=participant.user,
        token=lease.token,
        submission=annotation_services.Submission(ratings=full_ratings(), preference="tie"),
    )
    return participant


@pytest.mark.parametrize("format", ["csv", "jsonl", "wide"])
def test_the_research_export_never_holds_the_panel_id(participant_who_rated, tmp_path, format):
    output = tmp_path / f"ratings.{format}"

    call_command("export_ratings", "--format", format, "-o", str(output))

    exported = output.read_text(encoding="utf-8")
    pseudonym = participant_who_rated.user.annotator_profile.pseudonym
    assert pseudonym in exported, "the participant's judgment is in the export"
    assert PROLIFIC_PID not in exported
    assert participant_who_rated.pid_hash not in exported
    assert participant_who_rated.user.username not in exported


def test_the_participants_pages_never_show_the_panel_id(client, study):
    panel = make_panel_study(study)
    link = reverse("panel-join", args=[study.slug]) + f"?PROLIFIC_PID={PROLIFIC_PID}"

    followed = client.get(link, follow=True)
    home = client.get("/")

    assert followed.status_code == 200
    for page in (followed, home):
        assert PROLIFIC_PID not in page.content.decode()
    assert panel.participants.get().pid == PROLIFIC_PID


def test_only_those_who_pay_see_the_panel_id_in_the_admin(client, study):
    participant = panel_participant(make_panel_study(study))
    url = reverse("admin:panels_participant_change", args=[participant.pk])
    listing = reverse("admin:panels_participant_changelist")
    staff = get_user_model().objects.create_user("staff", "staff@example.com", is_staff=True)
    staff.user_permissions.add(*_participant_permissions())
    payer = get_user_model().objects.create_superuser("payer", "payer@example.com")

    client.force_login(staff)
    staff_pages = client.get(url).content.decode() + client.get(listing).content.decode()
    client.force_login(payer)
    payer_page = client.get(url).content.decode()

    assert participant.user.username in staff_pages
    assert PROLIFIC_PID not in staff_pages
    assert participant.pid_hash not in staff_pages
    assert PROLIFIC_PID in payer_page


def _participant_permissions():
    from django.contrib.auth.models import Permission

    # Every permission of the app but the one to pay participants: staff who manage the
    # panel without paying anyone.
    return Permission.objects.filter(content_type__app_label="panels").exclude(
        codename="pay_participants"
    )


def test_the_id_is_found_again_by_its_keyed_hash_not_stored_plainly_for_matching(study):
    participant = panel_participant(make_panel_study(study))

    assert participant.pid_hash == services.pid_hash(PROLIFIC_PID)
    assert len(participant.pid_hash) == 64 and PROLIFIC_PID not in participant.pid_hash


def test_an_admin_sets_a_studys_panel_through_the_audited_service(client, study):
    from annotation.models import AuditAction, AuditEvent
    from panels.models import PanelStudy

    payer = get_user_model().objects.create_superuser("payer", "payer@example.com")
    client.force_login(payer)
    form = {
        "study": study.pk,
        "provider": "prolific",
        "id_parameter": "PROLIFIC_PID",
        "completion_url_template": "https://app.prolific.com/submissions/complete?cc={code}",
        "completion_code": "C1A2B3",
        "screen_out_code": "SCREENED",
        "failed_checks_code": "",
        "items_per_participant": 10,
        "minutes": 60,
        "places": 0,
        "skips_per_participant": 3,
    }

    refused = client.post(
        reverse("admin:panels_panelstudy_add"), {**form, "completion_code": "two words"}
    )
    added = client.post(reverse("admin:panels_panelstudy_add"), form)

    assert refused.status_code == 200 and "letters, digits" in refused.content.decode()
    assert added.status_code == 302
    panel = PanelStudy.objects.get(study=study)
    assert panel.completion_code == "C1A2B3" and panel.is_open is False
    event = AuditEvent.objects.get(action=AuditAction.PANEL_SETTINGS)
    assert event.actor == payer and event.after["completion_code"] == "C1A2B3"
