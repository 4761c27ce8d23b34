"""A study's members: who annotates it, for which characters, with which cap, and how
far the members cover what the study needs. (URL names keep the page's former name,
"assignment".)"""

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from common.forms import submit
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest
from dialogues.models import Character

from ... import selectors, services
from ...models import AnnotatorProfile, Study, StudyMembership
from .common import back
from .forms import MembershipAddForm, MembershipChangeForm


@study_manager_required
@require_GET
def study_members(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)
    return render(
        request,
        "staff/members.html",
        {
            "study": study,
            "coverage": selectors.study_capacity(study),
            "members": selectors.study_members(study),
            "candidates": selectors.assignable_annotators(study),
        },
    )


@study_manager_required
@require_POST
def membership_add(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug)

    def add(data: dict[str, Any]) -> list[StudyMembership]:
        profiles = AnnotatorProfile.objects.filter(pk__in=data["profile"]).select_related("user")
        return services.memberships_add(
            study=study,
            annotators=[profile.user for profile in profiles],
            actor=request.user,
            cap=data["cap"],
            characters=list(Character.objects.filter(pk__in=data["character"])),
        )

    return submit(
        request,
        MembershipAddForm(request.POST),
        add,
        success=lambda added: (
            ngettext("%(n)d annotator assigned.", "%(n)d annotators assigned.", len(added))
            % {"n": len(added)}
        ),
        then=reverse("staff-assignment", args=[study.slug]),
    )


@study_manager_required
@require_POST
def membership_change(request: AuthenticatedRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(
        StudyMembership.objects.select_related("study"), pk=membership_id, study__slug=slug
    )
    form = MembershipChangeForm(request.POST)
    removing = form.is_valid() and form.cleaned_data["remove"]

    def change(data: dict[str, Any]) -> StudyMembership | None:
        if data["remove"]:
            return services.membership_remove(membership=membership, actor=request.user)
        return services.membership_cap_set(
            membership=membership, actor=request.user, cap=data["cap"]
        )

    return submit(
        request,
        form,
        change,
        success=_("The annotator is no longer assigned to this study.")
        if removing
        else _("The cap is saved."),
        then=back(request, reverse("staff-assignment", args=[slug])),
    )
