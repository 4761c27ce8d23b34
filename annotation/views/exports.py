"""Export files prepared by a worker: request one, watch it, download it."""

from django.conf import settings
from django.contrib import messages
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from .. import selectors, services
from ..models import ExportJob, ExportKind, ExportStatus, Study
from ..roles import is_admin, researcher_required


def export_context(user, study) -> dict:
    """What the results page's export section shows."""
    jobs = selectors.export_jobs_of(user, study)
    return {
        "jobs": jobs,
        "exports_pending": any(job.pending for job in jobs),
        "export_kinds": ExportKind.choices,
        "keep_days": settings.CHATANIME_EXPORT_KEEP_DAYS,
    }


def _jobs_fragment(request, study, status=200, error=None):
    return render(
        request,
        "annotation/results.html#export-jobs",
        {"study": study, "export_error": error, **export_context(request.user, study)},
        status=status,
    )


@researcher_required
@require_http_methods(["GET", "POST"])
def export_jobs(request, slug):
    """GET: the researcher's latest jobs (polled while one is running). POST: a new job."""
    study = get_object_or_404(Study, slug=slug)
    if request.method == "GET":
        if not request.htmx:
            return redirect("results-study", slug=study.slug)
        return _jobs_fragment(request, study)
    try:
        services.export_job_request(
            study=study,
            user=request.user,
            kind=request.POST.get("kind", ""),
            include_excluded=request.POST.get("include_excluded") == "on",
            bom=request.POST.get("bom") == "on",
        )
    except services.AnnotationError as error:
        if request.htmx:
            return _jobs_fragment(request, study, status=422, error=error.message)
        messages.error(request, error.message)
        return redirect("results-study", slug=study.slug)
    if request.htmx:
        return _jobs_fragment(request, study, status=201)
    return redirect("results-study", slug=study.slug)


@researcher_required
@require_GET
def export_download(request, pk):
    """The finished file, streamed from disk. Only its requester (or an admin) gets it."""
    job = get_object_or_404(ExportJob.objects.select_related("study"), pk=pk)
    if job.requested_by_id != request.user.pk and not is_admin(request.user):
        raise Http404
    if job.status != ExportStatus.DONE or not job.file:
        raise Http404
    try:
        stream = job.file.open("rb")
    except FileNotFoundError:
        raise Http404 from None
    filename = job.file.name.rsplit("/", 1)[-1]
    content_type = {
        "zip": "application/zip",
        "jsonl": "application/x-ndjson; charset=utf-8",
    }.get(filename.rsplit(".", 1)[-1], "text/csv; charset=utf-8")
    return FileResponse(stream, as_attachment=True, filename=filename, content_type=content_type)
