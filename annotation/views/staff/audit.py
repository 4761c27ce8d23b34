"""The audit trail, for study managers and admins: every staff action, fan writing and
answer collection included, and every automatic pause."""

from django.http import HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_GET

from common.roles import study_manager_required
from common.typing import AuthenticatedRequest

from ... import selectors
from ...models import AuditAction, Study
from .common import page_of
from .forms import AuditFilterForm

# The filter's groups, by the first part of an action's code.
ACTION_GROUPS = {
    "qualification": pgettext_lazy("staff page", "Screening"),
    "annotator": gettext_lazy("Annotators"),
    "membership": gettext_lazy("Annotators"),
    "judgment": gettext_lazy("Judgments and flags"),
    "flag": gettext_lazy("Judgments and flags"),
    "study": gettext_lazy("Studies"),
    "panel": gettext_lazy("Studies"),
    "writer": gettext_lazy("Fan writing"),
    "writing": gettext_lazy("Fan writing"),
    "collection": gettext_lazy("Answer collection"),
}


def action_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """The actions as (group name, [(code, name)]), one <optgroup> each."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for code, label in AuditAction.choices:
        name = str(ACTION_GROUPS.get(code.split(".")[0], _("Other")))
        groups.setdefault(name, []).append((code, str(label)))
    return list(groups.items())


@study_manager_required
@require_GET
def audit_log(request: AuthenticatedRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET)
    filters = form.filters()
    events = selectors.audit_events(
        action=filters["action"], study_id=filters["study"], actor=filters["actor"]
    )
    page = page_of(form, events)
    page.object_list = list(page.object_list)  # the rows the template shows, named below
    selectors.audit_changes_shown(page.object_list)
    return render(
        request,
        "staff/audit.html",
        {
            "page": page,
            "action_groups": action_groups(),
            "studies": Study.objects.order_by("name"),
            "filters": filters,
        },
    )
