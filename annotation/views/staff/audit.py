"""The audit trail, for admins."""

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from common.roles import admin_required
from common.typing import AuthenticatedRequest

from ... import selectors
from ...models import AuditAction, Study
from .common import page_of
from .forms import AuditFilterForm


@admin_required
@require_GET
def audit_log(request: AuthenticatedRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    filters = form.filters()
    events = selectors.audit_events(
        action=filters["action"], study_id=filters["study"], actor=filters["actor"]
    )
    return render(
        request,
        "staff/audit.html",
        {
            "page": page_of(form, events),
            "actions": AuditAction.choices,
            "studies": Study.objects.order_by("name"),
            "filters": filters,
        },
    )
