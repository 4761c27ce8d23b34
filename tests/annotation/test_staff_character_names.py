"""Staff pages name a character as the results page does, in either language: the Chinese
name the data holds and the English one beside it ("蒙奇·D·路飞 · Monkey D. Luffy"), not the
Chinese name alone on an English page."""

import pytest

from annotation import services
from tests.builders import applicant_who_passed, approved_annotator

pytestmark = pytest.mark.django_db

LUFFY = "蒙奇·D·路飞 · Monkey D. Luffy"
NATSUME = "夏目贵志 · Takashi Natsume"


def test_the_study_dashboard_and_members_page_name_characters_in_both_languages(
    client, manager, study, luffy
):
    member = approved_annotator("dora@example.com", [luffy])
    services.membership_add(study=study, annotator=member, actor=manager)
    approved_annotator("erin@example.com", [luffy])  # one to assign
    client.force_login(manager)

    dashboard = client.get(f"/staff/studies/{study.slug}/").content.decode()
    members = client.get(f"/staff/studies/{study.slug}/assignment/").content.decode()

    assert LUFFY in dashboard and NATSUME in dashboard
    assert f"<th>{LUFFY}</th>" in members  # the row of approved annotators per character
    assert f"> {NATSUME}</label>" in members  # the characters a member may be limited to


def test_the_screening_queue_and_annotators_name_characters_in_both_languages(
    client, manager, question_bank, luffy
):
    fan = applicant_who_passed("fan@example.com", [luffy])
    client.force_login(manager)

    queue = client.get("/staff/screening/").content.decode()
    profile_id = fan.annotator_profile.pk
    applicant = client.get(f"/staff/applicants/{profile_id}/").content.decode()
    annotator = client.get(f"/staff/annotators/{profile_id}/").content.decode()

    assert f">{LUFFY}</option>" in queue and f"{LUFFY}<br>" in queue
    assert f"<h2>{LUFFY} <small>" in applicant
    assert f"<td>{LUFFY}</td>" in annotator


def test_the_collection_form_names_characters_in_both_languages(admin_client, luffy):
    from collection.models import ModelEndpoint

    ModelEndpoint.objects.create(name="my-model", base_url="http://127.0.0.1:9/v1", model="x")

    html = admin_client.get("/staff/collection/").content.decode()

    assert f"> {LUFFY}</label>" in html
    assert "《海贼王》的蒙奇·D·路飞</label>" not in html
