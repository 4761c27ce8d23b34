"""Staff pages of a panel study: the dashboard (participants by state, codes given, time
and pay) and the payment file, which only those who pay may download."""

import csv

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from annotation.models import FlagKind
from common.forms import submit
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest

from . import forms, selectors, services
from .models import ParticipantState
from .money import money
from .prolific import REJECTION_CATEGORIES

# The payment file's columns: what the panel pays by, and nothing of the research data.
PAYMENT_COLUMNS = (
    "panel_id",
    "session_id",
    "state",
    "code",
    "decision",
    "bonus",
    "started_at",
    "finished_at",
)


def _panel(slug: str):
    panel = selectors.panel_study_for_slug(slug)
    if panel is None:
        raise Http404
    return panel


AWAITING_REVIEW = "review"


@study_manager_required
@require_GET
def panel_dashboard(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)
    summary = selectors.panel_summary(panel)
    state = request.GET.get("state", "")
    # Not a state: the finished participants flagged for a person to look at.
    if state not in (*ParticipantState.values, AWAITING_REVIEW):
        state = ""
    pays = selectors.pays_participants(request.user)
    participants = list(
        selectors.participants_for_staff(
            panel,
            state="" if state == AWAITING_REVIEW else state,
            awaiting_review=state == AWAITING_REVIEW,
        )[:500]
    )
    flag_names = dict(FlagKind.choices)
    for participant in participants:
        participant.reasons = [
            (flag_names.get(kind, kind), count)
            for kind, count in sorted(participant.review_reasons.items())
        ]
    codes = [
        (_("Completion code"), panel.completion_code),
        (_("Screen-out code"), panel.screen_out_code),
    ]
    if panel.failed_checks_code:
        codes.append((_("Failed-checks code"), panel.failed_checks_code))
    return render(
        request,
        "panels/staff_panel.html",
        {
            "panel": panel,
            "study": panel.study,
            "summary": summary,
            "states": [
                (value, label, summary.by_state[value]) for value, label in ParticipantState.choices
            ],
            "state": state,
            "participants": participants,
            "codes": [(label, code, summary.codes.get(code, 0)) for label, code in codes],
            "reward": money(panel.reward_minor_units or None, panel.currency),
            "hourly_pay": money(summary.hourly_pay_minor_units, panel.currency),
            "join_link": selectors.join_link(panel, request),
            "pays": pays,
            "check_results": list(selectors.check_results(panel).values()),
            "decision_form": forms.DecisionForm(panel=panel, categories=REJECTION_CATEGORIES),
            "void_form": forms.CheckVoidForm(),
        },
    )


@study_manager_required
@require_GET
def panel_payments(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """The payment file (CSV): panel id, state, code, decision and bonus of everyone the
    panel sent. Apart from the research export, for those who pay only."""
    panel = _panel(slug)
    if not selectors.pays_participants(request.user):
        raise PermissionDenied(_("Only those who pay participants may download payments."))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{panel.study.slug}-payments.csv"'
    writer = csv.writer(response)
    writer.writerow(PAYMENT_COLUMNS)
    for pid, session_id, state, code, decision, bonus, started, finished in selectors.payment_rows(
        panel
    ):
        writer.writerow(
            [
                pid,
                session_id,
                state,
                code,
                decision,
                f"{bonus // 100}.{bonus % 100:02d}",
                started.isoformat(),
                finished.isoformat() if finished else "",
            ]
        )
    return response


# --- Decisions ------------------------------------------------------------------------------
# Approving, rejecting, asking to return and bonuses move money: those who pay decide them.
# Pausing, places and unclear checks run the study: every study manager may.


def _then(panel) -> str:
    return reverse("staff-panel", args=[panel.study.slug])


def _payer(request: AuthenticatedRequest) -> None:
    if not selectors.pays_participants(request.user):
        raise PermissionDenied(_("Only those who pay participants may decide on submissions."))


@study_manager_required
@require_POST
def panel_approve(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)
    _payer(request)
    return submit(
        request,
        forms.ApproveForm(request.POST, panel=panel),
        lambda data: services.submissions_approve(
            panel_study=panel, participants=list(data["participants"]), actor=request.user
        ),
        success=lambda approved: (
            ngettext(
                "%(count)d submission approved.", "%(count)d submissions approved.", len(approved)
            )
            % {"count": len(approved)}
        ),
        then=_then(panel),
    )


@study_manager_required
@require_POST
def panel_decide(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    """Reject one participant's submission, ask them to return it, or pay them a bonus."""
    panel = _panel(slug)
    _payer(request)
    form = forms.DecisionForm(request.POST, panel=panel, categories=REJECTION_CATEGORIES)

    def decide(data):
        participant, verdict = data["participant"], data["verdict"]
        if verdict == forms.Verdict.REJECT:
            return services.submission_reject(
                participant=participant,
                reason=data["reason"],
                category=data["category"] or "OTHER",
                actor=request.user,
            )
        if verdict == forms.Verdict.RETURN:
            return services.submission_return_ask(
                participant=participant, reason=data["reason"], actor=request.user
            )
        return services.bonuses_pay(
            panel_study=panel,
            bonuses={participant: form.bonus_minor_units()},
            actor=request.user,
        )

    return submit(request, form, decide, success=_("Decision recorded."), then=_then(panel))


@study_manager_required
@require_POST
def panel_openness(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)

    def change(data):
        if data["action"] == "pause":
            return services.panel_pause(panel_study=panel, actor=request.user)
        return services.panel_resume(panel_study=panel, actor=request.user)

    return submit(
        request,
        forms.OpennessForm(request.POST),
        change,
        success=lambda changed: (
            _("Newcomers are let in again.") if changed.is_open else _("No newcomers now.")
        ),
        then=_then(panel),
    )


@study_manager_required
@require_POST
def panel_places(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)
    return submit(
        request,
        forms.PlacesForm(request.POST),
        lambda data: services.panel_places_set(
            panel_study=panel, places=data["places"], actor=request.user
        ),
        success=_("The places are saved."),
        then=_then(panel),
    )


@study_manager_required
@require_POST
def panel_check_void(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)
    return submit(
        request,
        forms.CheckVoidForm(request.POST),
        lambda data: services.check_void(
            panel_study=panel, check_key=data["check"], reason=data["reason"], actor=request.user
        ),
        success=_("The check is set aside: it is no longer shown and its failures do not count."),
        then=_then(panel) + "#checks",
    )
