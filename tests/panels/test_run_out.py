"""A study that runs out of items before a participant's batch is full: the participant is
screened out (paid) with the screen-out code, never left on "X of N rated"; but only when
no item can come to them any more, not while the last items are leased to others."""

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from annotation.models import (
    Assignment,
    AssignmentState,
    AuditAction,
    AuditEvent,
    Item,
    ItemKind,
    Study,
)
from panels import services
from panels.models import Participant, ParticipantState
from tests.builders import approved_annotator, make_panel_study, make_study
from tests.panels.test_batch import admitted, done_url, rate_one

pytestmark = pytest.mark.django_db

ITEMS = 3


@pytest.fixture
def scarce(demo_dataset, luffy):
    """A Luffy study (overlap 1, round 1, no gold) with two items left to judge, in two
    scenarios (so one person can take both), opened to a panel with batches of 3."""
    study = make_study(overlap=1, rounds=(1,), characters=[luffy])
    Study.objects.filter(pk=study.pk).update(gold_rate=0)
    pairs = study.items.filter(kind=ItemKind.PAIR).order_by("scenario__number", "pk")
    scenarios = list(dict.fromkeys(pairs.values_list("scenario_id", flat=True)))[:2]
    left = [pairs.filter(scenario_id=scenario).first().pk for scenario in scenarios]
    Item.objects.filter(study=study).exclude(pk__in=left).update(judgment_count=1)
    annotation_services.character_progress_recount(study=study)
    return make_panel_study(study, items_per_participant=ITEMS)


def test_a_study_out_of_items_screens_the_participant_out_with_the_code(client, scarce, luffy):
    participant = admitted(client, scarce, luffy)
    rate_one(client)
    rate_one(client)

    assert client.get(reverse("annotate"))["Location"] == done_url(scarce)
    page = client.get(done_url(scarce))

    assert page.status_code == 200
    body = page.content.decode()
    assert "run out of items" in body and 'data-testid="panel-screened-out"' in body
    assert "https://app.prolific.com/submissions/complete?cc=SCREENED" in body
    assert "C1A2B3" not in body and "2 of 3" not in body
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.SCREENED_OUT, "SCREENED")
    outcome = AuditEvent.objects.get(action=AuditAction.PANEL_OUTCOME)
    assert outcome.actor is None and outcome.after == {"state": "screened_out"}
    assert "ran out of items" in outcome.note and "2 of 3" in outcome.note
    # Coming back: the same page, no second code, no batch.
    assert client.get(reverse("annotate"))["Location"] == done_url(scarce)
    assert client.get(done_url(scarce)).content.decode().count("SCREENED") == 2
    assert AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).count() == 1


def test_items_leased_to_others_are_not_the_end_of_the_study(client, scarce, luffy):
    """The last item is in another annotator's hands: it may come back, so the participant
    is told how far they are (409) and keeps their place; once it is free, they rate it."""
    participant = admitted(client, scarce, luffy)
    rate_one(client)
    other = approved_annotator("other@example.com", [luffy])
    # The participant made the study members-only: staff add their own annotator to it.
    annotation_services.membership_add(study=scarce.study, annotator=other, actor=None)
    lease = annotation_services.assignment_next(user=other, study=scarce.study)
    assert lease is not None

    assert client.get(reverse("annotate"))["Location"] == done_url(scarce)
    page = client.get(done_url(scarce))
    assert page.status_code == 409 and "1 of 3" in page.content.decode()
    with pytest.raises(services.PanelError) as refused:
        services.participant_run_out(participant=participant)
    assert refused.value.code == "items_left"
    participant.refresh_from_db()
    assert (participant.state, participant.code) == (ParticipantState.STARTED, "")
    assert not AuditEvent.objects.filter(action=AuditAction.PANEL_OUTCOME).exists()

    annotation_services.annotator_leases_release(annotator=other)
    assert rate_one(client) == scarce.study.slug


def test_an_item_in_the_participants_own_hands_is_not_the_end(client, scarce, luffy):
    participant = admitted(client, scarce, luffy)
    rate_one(client)
    client.get(reverse("annotate"))
    assert Assignment.objects.filter(
        annotator=participant.user, state=AssignmentState.ACTIVE
    ).exists()

    with pytest.raises(services.PanelError) as refused:
        services.participant_run_out(participant=participant)

    assert refused.value.code == "items_left"
    assert Participant.objects.get().state == ParticipantState.STARTED


def test_running_out_is_refused_before_admission_and_once_the_batch_is_full(client, scarce, luffy):
    from tests.builders import panel_participant

    newcomer = panel_participant(scarce, pid="newcomer")
    with pytest.raises(services.PanelError) as refused:
        services.participant_run_out(participant=newcomer)
    assert refused.value.code == "not_admitted"
    participant = admitted(client, scarce, luffy)
    rate_one(client)
    rate_one(client)
    services.panel_configure(study=scarce.study, actor=None, items_per_participant=2)
    with pytest.raises(services.PanelError) as refused:
        services.participant_run_out(participant=participant)
    assert refused.value.code == "batch_full"
    assert Participant.objects.get(pk=participant.pk).state == ParticipantState.STARTED
