"""Export files prepared by a worker: request one, watch it, download it."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core.files.storage import Storage
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from common.roles import is_admin, researcher_required
from common.typing import AuthenticatedRequest

from .. import selectors, services
from ..models import ExportJob, ExportKind, ExportStatus, Study


def export_context(user: User, study: Study) -> dict[str, Any]:
    """What the results page's export section shows."""
    jobs = selectors.export_jobs_of(user, study)
    return {
        "jobs": jobs,
        "exports_pending": any(job.pending for job in jobs),
        "export_kinds": ExportKind.choices,
        "keep_days": settings.CHATANIME_EXPORT_KEEP_DAYS,
    }


def _jobs_fragment(
    request: AuthenticatedRequest, study: Study, status: int = 200, error: str | None = None
) -> HttpResponse:
    return render(
        request,
        "annotation/results.html#export-jobs",
        {"study": study, "export_error": error, **export_context(request.user, study)},
        status=status,
    )


@researcher_required
@require_http_methods(["GET", "POST"])
def export_jobs(request: AuthenticatedRequest, slug: str) -> HttpResponse:
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


def _finished_job(request: AuthenticatedRequest, pk: int) -> tuple[ExportJob, str]:
    """A finished job and the name of its file, for its requester (or an admin) only;
    anyone else gets a 404."""
    job = get_object_or_404(ExportJob.objects.select_related("study"), pk=pk)
    if job.requested_by_id != request.user.pk and not is_admin(request.user):
        raise Http404
    # A file field is false exactly when its name is empty.
    name = job.file.name
    if job.status != ExportStatus.DONE or not name:
        raise Http404
    return job, name


def _attachment(storage: Storage, name: str, content_type: str) -> FileResponse:
    try:
        stream = storage.open(name, "rb")
    except FileNotFoundError:
        raise Http404 from None
    filename = name.rsplit("/", 1)[-1]
    return FileResponse(stream, as_attachment=True, filename=filename, content_type=content_type)


@researcher_required
@require_GET
def export_download(request: AuthenticatedRequest, pk: int) -> FileResponse:
    """The finished file, streamed from disk. Only its requester (or an admin) gets it."""
    job, name = _finished_job(request, pk)
    content_type = {
        "zip": "application/zip",
        "jsonl": "application/x-ndjson; charset=utf-8",
    }.get(name.rsplit(".", 1)[-1], "text/csv; charset=utf-8")
    return _attachment(job.file.storage, name, content_type)


@researcher_required
@require_GET
def export_manifest(request: AuthenticatedRequest, pk: int) -> FileResponse:
    """The manifest written beside a finished file (checksum, options, study design,
    counts, software), on the same terms as the file. A snapshot has it inside its zip."""
    job, name = _finished_job(request, pk)
    if job.kind == ExportKind.SNAPSHOT:
        raise Http404
    manifest = services.manifest_name(name)
    return _attachment(job.file.storage, manifest, "application/json; charset=utf-8")
