"""Export files prepared by a worker: requested from the results page, polled, downloaded
by their researcher only; failures recorded."""

import csv
import hashlib
import io
import json
import zipfile

import pytest

from annotation import exports, services
from annotation.models import ExportJob, ExportStatus, Judgment
from annotation.simulation import simulate_study
from tests.builders import UserFactory, approved_annotator, make_study, researcher_named
from tests.fixtures.services import wait_for

HTMX = {"HX-Request": "true"}


@pytest.fixture
def media_root(tmp_path, settings, monkeypatch):
    root = tmp_path / "media"
    settings.MEDIA_ROOT = root
    # For a worker process started after this fixture.
    monkeypatch.setenv("DJANGO_MEDIA_ROOT", str(root))
    return root


@pytest.fixture
def world(demo_dataset, luffy, settings, media_root):
    settings.CHATANIME_BOOTSTRAP_DRAWS = 10
    study = make_study(overlap=1, rounds=(1,), include_diversity=True, characters=[luffy])
    simulate_study(study=study, annotators=3, seed=3)
    return {
        "study": study,
        "researcher": researcher_named("scientist@example.com"),
        "other_researcher": researcher_named("rival@example.com"),
        "staff": UserFactory(email="boss@example.com", is_staff=True),
        "annotator": approved_annotator("rater@example.com", [luffy]),
    }


def direct_export(client, study, kind="csv") -> bytes:
    response = client.get(f"/api/v1/studies/{study.slug}/export/", {"kind": kind})
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def downloaded(client, job, part="download") -> bytes:
    response = client.get(f"/exports/{job.pk}/{part}/")
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content)


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["csv", "wide", "jsonl"])
def test_a_prepared_file_equals_the_direct_download(
    client, world, kind, django_capture_on_commit_callbacks
):
    client.force_login(world["researcher"])
    url = f"/results/{world['study'].slug}/exports/"

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"kind": kind}, headers=HTMX)

    assert response.status_code == 201
    job = ExportJob.objects.get()
    assert job.status == ExportStatus.DONE and job.requested_by == world["researcher"]
    body = downloaded(client, job)
    assert body == direct_export(client, world["study"], kind)
    assert job.sha256 == hashlib.sha256(body).hexdigest() and job.size == len(body)
    assert job.rows == len(body.decode().splitlines()) - (0 if kind == "jsonl" else 1)
    # Its manifest comes beside it, as the command writes one: checksum, options, counts.
    manifest = json.loads(downloaded(client, job, "manifest"))
    name = job.file.name.rsplit("/", 1)[-1]
    assert manifest["files"] == {
        name: {"kind": kind, "rows": job.rows, "bytes": len(body), "sha256": job.sha256}
    }
    assert manifest["options"] == {
        "study": world["study"].slug,
        "include_excluded": False,
        "bom": False,
    }
    assert manifest["judgments"] == exports.judgment_counts(world["study"])
    # The answer shows the job queued and polls; once the worker is done, the link appears.
    assert b'data-status="queued"' in response.content and b"every 2s" in response.content
    listed = client.get(url, headers=HTMX).content.decode()
    assert f"/exports/{job.pk}/download/" in listed and f"/exports/{job.pk}/manifest/" in listed


@pytest.mark.django_db
def test_a_file_for_excel_starts_with_a_bom_and_can_include_excluded_judgments(
    client, world, django_capture_on_commit_callbacks
):
    judgment = Judgment.objects.filter(item__study=world["study"]).first()
    services.judgment_exclude(judgment=judgment, decided_by=None, reason="test")
    client.force_login(world["researcher"])

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/results/{world['study'].slug}/exports/",
            {"kind": "csv", "bom": "on", "include_excluded": "on"},
        )

    body = downloaded(client, ExportJob.objects.get())
    assert body.startswith(b"\xef\xbb\xbfstudy,item,")
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"))))
    assert {r["excluded"] for r in rows if r["judgment"] == str(judgment.pk)} == {"True"}


@pytest.mark.django_db
def test_a_snapshot_file_is_a_zip_of_the_three_files_and_their_manifest(
    client, world, django_capture_on_commit_callbacks
):
    client.force_login(world["researcher"])

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/results/{world['study'].slug}/exports/", {"kind": "snapshot"})

    job = ExportJob.objects.get()
    archive = zipfile.ZipFile(io.BytesIO(downloaded(client, job)))
    names = {name.rsplit("/", 1)[-1]: name for name in archive.namelist()}
    assert set(names) == {
        "answers.jsonl",
        "audit.jsonl",
        "manifest.json",
        "ratings-long.csv",
        "ratings-wide.csv",
        "ratings.jsonl",
        "results.json",
    }
    manifest = json.loads(archive.read(names["manifest.json"]))
    for name, described in manifest["files"].items():
        assert hashlib.sha256(archive.read(names[name])).hexdigest() == described["sha256"]
    assert archive.read(names["ratings-long.csv"]) == direct_export(client, world["study"])
    assert job.rows == manifest["files"]["ratings-long.csv"]["rows"]
    assert manifest["studies"][0]["slug"] == world["study"].slug
    # Its manifest is the one inside the zip; there is no second file to fetch.
    assert client.get(f"/exports/{job.pk}/manifest/").status_code == 404


@pytest.mark.django_db
def test_a_failing_job_records_its_error_and_leaves_no_file(
    client, world, media_root, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    # Where every export file, and its manifest's checksum, is written.
    monkeypatch.setattr("annotation.exports.snapshot.export_write", broken)
    client.force_login(world["researcher"])

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/results/{world['study'].slug}/exports/", {"kind": "wide"}, headers=HTMX)

    job = ExportJob.objects.get()
    assert job.status == ExportStatus.FAILED
    assert "No space left on device" in job.error and job.finished_at is not None
    assert list((media_root / "exports").iterdir()) == []
    assert client.get(f"/exports/{job.pk}/download/").status_code == 404
    assert client.get(f"/exports/{job.pk}/manifest/").status_code == 404
    page = client.get(f"/results/{world['study'].slug}/").content.decode()
    assert "No space left on device" in page


@pytest.mark.django_db
def test_a_job_that_cannot_be_queued_says_so(
    client, world, monkeypatch, django_capture_on_commit_callbacks
):
    from kombu.exceptions import OperationalError

    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to localhost:6379")

    monkeypatch.setattr("annotation.tasks.export_job_run.apply_async", broker_down)
    client.force_login(world["researcher"])

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/results/{world['study'].slug}/exports/", {"kind": "csv"})

    assert response.status_code == 302
    job = ExportJob.objects.get()
    assert job.status == ExportStatus.FAILED and "could not reach the workers" in job.error


@pytest.mark.django_db
def test_running_a_finished_job_again_changes_nothing(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = services.export_job_request(
            study=world["study"], user=world["researcher"], kind="csv"
        )
    job.refresh_from_db()
    finished = (job.status, job.finished_at, job.sha256)

    again = services.export_job_run(job=job)

    assert (again.status, again.finished_at, again.sha256) == finished


@pytest.mark.django_db
def test_an_unknown_format_is_refused_and_creates_no_job(client, world):
    client.force_login(world["researcher"])
    url = f"/results/{world['study'].slug}/exports/"

    by_htmx = client.post(url, {"kind": "xlsx"}, headers=HTMX)
    by_form = client.post(url, {"kind": "xlsx"}, follow=True)

    assert by_htmx.status_code == 422
    assert "Unknown export format" in by_htmx.content.decode()
    assert "Unknown export format" in by_form.content.decode()
    assert not ExportJob.objects.exists()


@pytest.mark.django_db
def test_the_results_page_offers_the_button_and_polls_only_while_a_job_runs(client, world):
    client.force_login(world["researcher"])
    url = f"/results/{world['study'].slug}/"

    assert "Prepare export file" in client.get(url).content.decode()
    assert 'hx-trigger="every 2s"' not in client.get(url).content.decode()
    job = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="csv"
    )

    fragment = client.get(f"{url}exports/", headers=HTMX).content.decode()

    assert 'hx-trigger="every 2s"' in fragment and 'data-status="queued"' in fragment
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.DONE)
    assert (
        'hx-trigger="every 2s"' not in client.get(f"{url}exports/", headers=HTMX).content.decode()
    )


@pytest.mark.django_db
def test_researchers_see_only_their_own_jobs(client, world):
    ExportJob.objects.create(
        study=world["study"], requested_by=world["other_researcher"], kind="wide"
    )
    client.force_login(world["researcher"])

    fragment = client.get(f"/results/{world['study'].slug}/exports/", headers=HTMX)

    assert 'data-testid="export-job"' not in fragment.content.decode()


@pytest.mark.django_db
def test_who_may_request_and_download_export_files(
    client, world, django_capture_on_commit_callbacks
):
    slug = world["study"].slug
    with django_capture_on_commit_callbacks(execute=True):
        job = services.export_job_request(
            study=world["study"], user=world["researcher"], kind="csv"
        )
    download = f"/exports/{job.pk}/download/"
    manifest = f"/exports/{job.pk}/manifest/"
    request = f"/results/{slug}/exports/"

    for url in (download, manifest, request):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    assert client.post(request, {"kind": "csv"}).status_code == 302

    client.force_login(world["annotator"])
    assert client.get(download).status_code == 403
    assert client.get(manifest).status_code == 403
    assert client.get(request, headers=HTMX).status_code == 403
    assert client.post(request, {"kind": "csv"}).status_code == 403

    client.force_login(world["other_researcher"])
    assert client.get(download).status_code == 404
    assert client.get(manifest).status_code == 404

    client.force_login(world["staff"])
    assert client.get(download).status_code == 200
    assert client.get(manifest).status_code == 200

    client.force_login(world["researcher"])
    assert client.get(download).status_code == 200
    assert client.get(manifest).status_code == 200
    assert client.get("/exports/999999/download/").status_code == 404
    assert client.get("/exports/999999/manifest/").status_code == 404
    assert ExportJob.objects.count() == 1


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_takes_a_job_from_queued_to_done(
    media_root, postgres, celery_worker, client, world
):
    client.force_login(world["researcher"])

    response = client.post(
        f"/results/{world['study'].slug}/exports/", {"kind": "csv"}, headers=HTMX
    )

    job = ExportJob.objects.get()
    assert 'data-status="queued"' in response.content.decode() or job.status != "queued"
    done = wait_for(
        lambda: ExportJob.objects.filter(pk=job.pk, status__in=["done", "failed"]).first(),
        timeout=60,
    )
    assert done is not None and done.status == ExportStatus.DONE, done and done.error
    assert downloaded(client, done) == direct_export(client, world["study"])


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_writes_a_consistent_snapshot(
    media_root, postgres, celery_worker, client, world
):
    client.force_login(world["researcher"])

    client.post(f"/results/{world['study'].slug}/exports/", {"kind": "snapshot"}, headers=HTMX)

    done = wait_for(
        lambda: ExportJob.objects.filter(status__in=["done", "failed"]).first(), timeout=60
    )
    assert done is not None and done.status == ExportStatus.DONE, done and done.error
    archive = zipfile.ZipFile(io.BytesIO(downloaded(client, done)))
    manifest_name = next(n for n in archive.namelist() if n.endswith("manifest.json"))
    manifest = json.loads(archive.read(manifest_name))
    assert manifest["files"]["ratings-long.csv"]["rows"] == done.rows > 0


# Tidying: lost messages, dead workers, old files ------------------------------------


@pytest.mark.django_db
def test_a_job_whose_message_was_lost_is_sent_again_and_finishes(world):
    from datetime import timedelta

    from django.utils import timezone

    # Recorded but never sent to the workers, one of them 11 minutes ago.
    lost = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="csv"
    )
    ExportJob.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(minutes=11))
    recent = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="wide"
    )

    assert services.export_jobs_tidy() == {"requeued": 1, "expired": 0}

    lost.refresh_from_db()
    recent.refresh_from_db()
    assert lost.status == ExportStatus.DONE and lost.rows > 0
    assert recent.status == ExportStatus.QUEUED  # its message may still be on its way


@pytest.mark.django_db
def test_a_job_left_running_by_a_dead_worker_is_written_again(world):
    from datetime import timedelta

    from django.utils import timezone

    job = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="csv"
    )
    long_ago = timezone.now() - timedelta(hours=3)
    ExportJob.objects.filter(pk=job.pk).update(status=ExportStatus.RUNNING, started_at=long_ago)
    busy = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="wide"
    )
    ExportJob.objects.filter(pk=busy.pk).update(
        status=ExportStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=5)
    )

    assert services.export_jobs_tidy()["requeued"] == 1

    job.refresh_from_db()
    busy.refresh_from_db()
    assert job.status == ExportStatus.DONE
    assert busy.status == ExportStatus.RUNNING  # still within its time: left alone


@pytest.mark.django_db
def test_old_files_are_deleted_and_their_jobs_say_so(
    client, world, media_root, settings, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    settings.CHATANIME_EXPORT_KEEP_DAYS = 3
    with django_capture_on_commit_callbacks(execute=True):
        old = services.export_job_request(
            study=world["study"], user=world["researcher"], kind="csv"
        )
        new = services.export_job_request(
            study=world["study"], user=world["researcher"], kind="wide"
        )
    old.refresh_from_db()
    new.refresh_from_db()
    old_file = media_root / old.file.name
    old_manifest = media_root / (old.file.name + ".manifest.json")
    assert old_file.exists() and old_manifest.exists()
    ExportJob.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=4))

    assert services.export_jobs_tidy() == {"requeued": 0, "expired": 1}
    assert services.export_jobs_tidy() == {"requeued": 0, "expired": 0}

    old.refresh_from_db()
    assert old.status == ExportStatus.EXPIRED and not old.file and not old_file.exists()
    assert not old_manifest.exists()
    assert (media_root / new.file.name).exists()
    client.force_login(world["researcher"])
    assert client.get(f"/exports/{old.pk}/download/").status_code == 404
    assert client.get(f"/exports/{new.pk}/download/").status_code == 200
    page = client.get(f"/results/{world['study'].slug}/").content.decode()
    assert "Deleted after 3 days; prepare it again if you need it." in page


@pytest.mark.django_db
def test_an_expired_job_whose_file_is_already_gone_is_no_error(world, media_root):
    from datetime import timedelta

    from django.utils import timezone

    job = ExportJob.objects.create(
        study=world["study"], requested_by=world["researcher"], kind="csv"
    )
    ExportJob.objects.filter(pk=job.pk).update(
        status=ExportStatus.DONE,
        file="exports/removed-by-hand.csv",
        finished_at=timezone.now() - timedelta(days=30),
    )

    assert services.export_jobs_tidy()["expired"] == 1
    assert ExportJob.objects.get(pk=job.pk).status == ExportStatus.EXPIRED
