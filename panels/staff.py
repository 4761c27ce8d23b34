"""Staff pages of a panel study: the dashboard (participants by state, codes given, time
and pay) and the payment file, which only those who pay may download."""

import csv

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotation.models import FlagKind
from common.roles import study_manager_required
from common.typing import AuthenticatedRequest

from . import selectors
from .models import ParticipantState
from .money import money

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


@study_manager_required
@require_GET
def panel_dashboard(request: AuthenticatedRequest, slug: str) -> HttpResponse:
    panel = _panel(slug)
    summary = selectors.panel_summary(panel)
    state = request.GET.get("state", "")
    if state not in ParticipantState.values:
        state = ""
    pays = selectors.pays_participants(request.user)
    participants = list(selectors.participants_for_staff(panel, state=state)[:500])
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
            "join_link": selectors.join_link(panel),
            "pays": pays,
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
