"""Staff pages: screening review, the annotator directory, assignment and coverage, study
dashboards and the audit trail. Study managers use all but the audit trail, which is for
admins. Plain form posts work everywhere; htmx swaps the changed fragment in place."""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from dialogues.models import Character

from .. import selectors, services

from ..models import (
    AnnotatorProfile,
    AuditAction,
    Judgment,
    ProfileStatus,
    Qualification,
    QualificationStatus,
    QualityFlag,
    Study,
    StudyMembership,
    StudyStatus,
)
from ..parsing import whole_number, whole_numbers
from ..roles import admin_required, study_manager_required

PAGE_SIZE = 50


def _page(request, rows):
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))


# Screening ---------------------------------------------------------------------------


def _queue_context(request):
    status = request.GET.get("status") or request.POST.get("status") or QualificationStatus.PASSED
    if status not in QualificationStatus.values:
        status = QualificationStatus.PASSED
    character = request.GET.get("character") or request.POST.get("character") or ""
    character = whole_number(character)
    return {
        "page": _page(request, selectors.screening_queue(status=status, character_id=character)),
        "counts": selectors.queue_counts(),
        "statuses": QualificationStatus.choices,
        "characters": Character.objects.order_by("pk"),
        "filters": {"status": status, "character": character},
    }


@study_manager_required
@require_GET
def screening_queue(request):
    template = "staff/screening.html#queue" if request.htmx else "staff/screening.html"
    return render(request, template, _queue_context(request))


@study_manager_required
@require_POST
def screening_review(request):
    """Approve or reject the chosen applications, one note for all of them."""
    decision = request.POST.get("decision")
    ids = whole_numbers(request.POST.getlist("qualification"))
    qualifications = list(Qualification.objects.filter(pk__in=ids))
    error = None
    if decision not in ("approve", "reject"):
        error = _("Choose approve or reject.")
    elif len(qualifications) != len(set(ids)):
        error = _("Some of these applications do not exist.")
    else:
        try:
            services.qualifications_review(
                qualifications=qualifications,
                reviewer=request.user,
                approve=decision == "approve",
                note=request.POST.get("note", ""),
            )
        except services.AnnotationError as refusal:
            error = refusal.message
    if error is None:
        if decision == "approve":
            done = _("%(n)d application(s) approved.")
        else:
            done = _("%(n)d application(s) rejected.")
        messages.success(request, done % {"n": len(qualifications)})
    next_url = request.POST.get("next") or ""
    if request.htmx and not next_url:
        context = _queue_context(request)
        context["error"] = error
        return render(request, "staff/screening.html#queue", context, status=422 if error else 200)
    if error:
        messages.error(request, error)
    return _back(request, reverse("staff:screening"))


@study_manager_required
@require_GET
def applicant(request, profile_id):
    profile = get_object_or_404(AnnotatorProfile.objects.select_related("user"), pk=profile_id)
    return render(
        request,
        "staff/applicant.html",
        {
            "profile": profile,
            "qualifications": profile.qualifications.select_related(
                "character", "reviewed_by"
            ).order_by("character_id"),
        },
    )


# Annotators --------------------------------------------------------------------------


@study_manager_required
@require_GET
def annotator_directory(request):
    status = request.GET.get("status", "")
    status = status if status in ProfileStatus.values else ""
    search = request.GET.get("q", "").strip()
    page = _page(request, selectors.annotator_profiles(status=status, search=search))
    return render(
        request,
        "staff/annotators.html",
        {
            "page": page,
            "rows": selectors.annotator_rows(page.object_list),
            "statuses": ProfileStatus.choices,
            "filters": {"status": status, "q": search},
        },
    )


@study_manager_required
@require_GET
def annotator_detail(request, profile_id):
    profile = get_object_or_404(AnnotatorProfile.objects.select_related("user"), pk=profile_id)
    return render(
        request,
        "staff/annotator.html",
        {"profile": profile, **selectors.annotator_detail(profile)},
    )


@study_manager_required
@require_POST
def annotator_suspension(request, profile_id, action):
    profile = get_object_or_404(AnnotatorProfile, pk=profile_id)
    change = {
        "suspend": services.annotator_suspend,
        "reinstate": services.annotator_reinstate,
    }.get(action)
    if change is None:
        raise Http404
    try:
        change(profile=profile, actor=request.user, reason=request.POST.get("reason", ""))
    except services.AnnotationError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(
            request,
            _("The annotator is suspended.")
            if action == "suspend"
            else _("The annotator is reinstated."),
        )
    return redirect("staff:annotator", profile_id=profile.pk)


@study_manager_required
@require_POST
def flag_resolve(request, flag_id):
    """Mark a flag about an annotator's work as reviewed, saying what was found."""
    flag = get_object_or_404(QualityFlag.objects.select_related("study"), pk=flag_id)
    profile = get_object_or_404(AnnotatorProfile, user_id=flag.annotator_id)
    note = request.POST.get("note", "").strip()
    if flag.resolved_at is not None:
        messages.error(request, _("This flag has already been reviewed."))
    elif not note:
        messages.error(request, _("Please give a reason."))
    else:
        services.flag_resolve(flag=flag, resolved_by=request.user, note=note)
        messages.success(request, _("The flag is marked as reviewed."))
    return redirect("staff:annotator", profile_id=profile.pk)


# Studies -----------------------------------------------------------------------------


@study_manager_required
@require_GET
def study_list(request):
    return render(request, "staff/studies.html", {"studies": selectors.staff_studies()})


def _dashboard_context(study):
    progress = selectors.study_progress(study)
    total = progress["total"]
    return {
        "study": study,
        "progress": progress,
        "throughput": selectors.study_throughput(study),
        "eta": selectors.study_eta(study, total.needed - total.judgments),
        "open_leases": selectors.open_leases(study),
        "flagged": selectors.flagged_judgments(study),
        "flagged_count": selectors.flagged_count(study),
        "flagged_annotators": selectors.flagged_annotators(study),
        "statuses": StudyStatus.choices,
    }


@study_manager_required
@require_GET
def study_dashboard(request, slug):
    study = get_object_or_404(Study, slug=slug)
    return render(request, "staff/study.html", _dashboard_context(study))


@study_manager_required
@require_POST
def study_caps(request, slug):
    study = get_object_or_404(Study, slug=slug)
    try:
        services.study_caps_set(
            study=study,
            actor=request.user,
            caps={
                "cap_per_annotator": request.POST.get("cap_per_annotator"),
                "cap_per_annotator_per_day": request.POST.get("cap_per_annotator_per_day"),
            },
        )
    except services.AnnotationError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(request, _("The caps are saved."))
    return redirect("staff:study", slug=study.slug)


@study_manager_required
@require_POST
def study_status(request, slug):
    study = get_object_or_404(Study, slug=slug)
    try:
        services.study_set_status(
            study=study, status=request.POST.get("status", ""), actor=request.user
        )
    except services.AnnotationError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(
            request, _("The study is now: %(status)s") % {"status": study.get_status_display()}
        )
    return redirect("staff:study", slug=study.slug)


@study_manager_required
@require_POST
def judgment_decide(request, slug, judgment_id):
    """Keep or exclude a flagged judgment; the reason is required."""
    study = get_object_or_404(Study, slug=slug)
    judgment = get_object_or_404(Judgment, pk=judgment_id, item__study=study)
    decision = request.POST.get("decision")
    error = None
    if decision not in ("exclude", "include"):
        error = _("Choose keep or exclude.")
    else:
        try:
            services.judgment_decide(
                judgment=judgment,
                decided_by=request.user,
                reason=request.POST.get("reason", ""),
                excluded=decision == "exclude",
            )
        except services.AnnotationError as refusal:
            error = refusal.message
    if request.htmx:
        # Only the list of flagged judgments is swapped in; the rest of the page stays.
        context = {
            "study": study,
            "flagged": selectors.flagged_judgments(study),
            "flagged_count": selectors.flagged_count(study),
        }
        context["decision_error"] = error
        context["error_judgment"] = judgment.pk if error else None
        return render(request, "staff/study.html#flagged", context, status=422 if error else 200)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, _("Judgment %(pk)d: decision recorded.") % {"pk": judgment.pk})
    return redirect(reverse("staff:study", args=[study.slug]) + "#flagged")


# Assignment --------------------------------------------------------------------------


@study_manager_required
@require_GET
def study_assignment(request, slug):
    study = get_object_or_404(Study, slug=slug)
    return render(
        request,
        "staff/assignment.html",
        {
            "study": study,
            "coverage": selectors.study_capacity(study),
            "members": selectors.study_members(study),
            "candidates": selectors.assignable_annotators(study),
        },
    )


@study_manager_required
@require_POST
def membership_add(request, slug):
    study = get_object_or_404(Study, slug=slug)
    profiles = AnnotatorProfile.objects.filter(
        pk__in=whole_numbers(request.POST.getlist("profile"))
    ).select_related("user")
    try:
        added = services.memberships_add(
            study=study,
            annotators=[profile.user for profile in profiles],
            actor=request.user,
            cap=request.POST.get("cap", ""),
            characters=list(
                Character.objects.filter(pk__in=whole_numbers(request.POST.getlist("character")))
            ),
        )
    except services.AnnotationError as refusal:
        messages.error(request, refusal.message)
    else:
        messages.success(request, _("%(n)d annotator(s) assigned.") % {"n": len(added)})
    return redirect("staff:assignment", slug=study.slug)


@study_manager_required
@require_POST
def membership_change(request, slug, membership_id):
    membership = get_object_or_404(
        StudyMembership.objects.select_related("study"), pk=membership_id, study__slug=slug
    )
    try:
        if request.POST.get("remove"):
            services.membership_remove(membership=membership, actor=request.user)
            messages.success(request, _("The annotator is no longer assigned to this study."))
        elif "cap" not in request.POST:
            # An empty cap field means "the study's cap"; a post without the field is
            # not a cap change at all.
            messages.error(request, _("Give a cap, or remove the annotator."))
        else:
            services.membership_cap_set(
                membership=membership, actor=request.user, cap=request.POST.get("cap", "")
            )
            messages.success(request, _("The cap is saved."))
    except services.AnnotationError as refusal:
        messages.error(request, refusal.message)
    return _back(request, reverse("staff:assignment", args=[slug]))


def _back(request, default: str):
    """Back to the staff page the form was on (only ever a staff page), else `default`."""
    next_url = request.POST.get("next", "")
    return redirect(next_url if next_url.startswith("/staff/") else default)


# Audit trail -------------------------------------------------------------------------


@admin_required
@require_GET
def audit_log(request):
    action = request.GET.get("action", "")
    action = action if action in AuditAction.values else ""
    study = request.GET.get("study", "")
    study = whole_number(study)
    actor = request.GET.get("actor", "").strip()
    return render(
        request,
        "staff/audit.html",
        {
            "page": _page(request, selectors.audit_events(action=action, study_id=study, actor=actor)),
            "actions": AuditAction.choices,
            "studies": Study.objects.order_by("name"),
            "filters": {"action": action, "study": study, "actor": actor},
        },
    )
