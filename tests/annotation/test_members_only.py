"""An annotator who is `members_only` rates only the studies they are a member of: never a
study open to every approved annotator, and staffing does not count them there."""

import pytest

from annotation import services
from annotation.models import AnnotatorProfile
from annotation.selectors.studies import study_raters
from tests.builders import approved_annotator, make_study

pytestmark = pytest.mark.django_db


def test_a_members_only_annotator_gets_no_item_of_a_study_open_to_all(study, luffy):
    user = approved_annotator("crowd@example.com", [luffy])
    AnnotatorProfile.objects.filter(user=user).update(members_only=True)

    assert services.assignment_next(user=user) is None
    assert not study_raters(study, [luffy]).filter(profile__user=user).exists()


def test_a_members_only_annotator_rates_their_own_study(study, luffy):
    user = approved_annotator("crowd@example.com", [luffy])
    AnnotatorProfile.objects.filter(user=user).update(members_only=True)
    own = make_study(characters=[luffy])
    services.membership_add(study=own, annotator=user, actor=None)

    lease = services.assignment_next(user=user)
    assert lease is not None and lease.item.study == own
    assert study_raters(own, [luffy]).filter(profile__user=user).exists()


def test_direct_admission_needs_consent_and_a_character(luffy, study):
    from tests.builders import UserFactory

    user = UserFactory(email="new@example.com")
    services.profile_get_or_create(user=user)
    with pytest.raises(services.AnnotationError) as refused:
        services.annotator_admit(annotator=user, characters=[luffy], actor=None)
    assert refused.value.code == "no_consent"
    services.consent_give(user=user)
    with pytest.raises(services.AnnotationError) as refused:
        services.annotator_admit(annotator=user, characters=[], actor=None)
    assert refused.value.code == "no_characters"
    profile = services.annotator_admit(
        annotator=user, characters=[luffy], actor=None, members_only=True
    )
    assert profile.status == "approved" and profile.members_only


def test_releasing_leases_frees_them_at_once(alice):
    lease = services.assignment_next(user=alice)
    assert services.annotator_leases_release(annotator=alice) == 1
    lease.refresh_from_db()
    assert lease.state == "expired"
