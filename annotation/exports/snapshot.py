"""Frozen snapshots: the long CSV, the wide CSV and JSONL of one moment, with a manifest
that says what they are (study settings, metrics, row counts, checksums, software
version, time, options) so that an analysis can cite exactly the data it used."""

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from django.conf import settings
from django.db import connection, models, transaction

from common.snapshots import snapshot_files

from ..models import Judgment, Metric, Study
from .streams import ExportError, export_write

SNAPSHOT_FILES = {
    "ratings-long.csv": "csv",
    "ratings-wide.csv": "wide",
    "ratings.jsonl": "jsonl",
}
# Every staff decision that shaped the data (screening, suspensions, exclusions, study
# changes), one JSON object per line, oldest first.
AUDIT_FILE = "audit.jsonl"
# The style of every answer in the pairs (length in characters, emoji and kaomoji), one
# JSON object per line, by answer id: what the style-adjusted differences are fitted on.
ANSWERS_FILE = "answers.jsonl"
# The study's results document as computed when the snapshot was taken, so that
# `reproduce` can rebuild every figure from the rating files and compare.
RESULTS_FILE = "results.json"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "chatanime-export-snapshot/1"


@functools.cache
def software_version() -> dict:
    """The installed package's version, else pyproject's; the git revision when the
    code is a checkout. Never fails: a snapshot is worth more than its provenance.

    Found once per process: the code a process runs is the code it loaded when it
    started, whatever the checkout says later; and a results recompute, which names
    the software on every run, would otherwise start `git` each time."""
    try:
        version = metadata.version("chatanime")
    except metadata.PackageNotFoundError:
        try:
            with open(Path(settings.BASE_DIR) / "pyproject.toml", "rb") as project:
                version = tomllib.load(project)["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            version = "unknown"
    try:
        revision = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        revision = None
    return {"name": "chatanime", "version": version, "revision": revision or None}


def _setting(value):
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value


def study_settings(study: Study) -> dict:
    """Every field of the study, so that the design can be rebuilt from the manifest."""
    described = {}
    for field in Study._meta.get_fields():
        if field.auto_created and not field.concrete:
            continue  # reverse relations: items, results, ...
        if isinstance(field, models.ManyToManyField):
            related = getattr(study, field.name).all()
            described[field.name] = sorted(_natural_key(r) for r in related)
        elif isinstance(field, models.ForeignKey):
            described[field.name] = _natural_key(getattr(study, field.name))
        else:
            described[field.name] = _setting(getattr(study, field.attname))
    return described


def _natural_key(instance):
    for name in ("slug", "key", "number"):
        if hasattr(instance, name):
            return getattr(instance, name)
    return instance.pk


def metric_definitions() -> list[dict]:
    return [
        {
            "slug": m.slug,
            "dimension": m.dimension,
            "position": m.position,
            "label_en": m.label_en,
            "label_zh": m.label_zh,
            "for_diversity": m.for_diversity,
            "scale": {"minimum": 1, "maximum": 5},
            "anchors": m.anchors,
        }
        for m in Metric.objects.order_by("position", "pk")
    ]


def snapshot_write(
    directory, study=None, *, include_excluded=False, bom=False, command=None
) -> dict:
    """Write the snapshot into `directory` (new or empty) and return its manifest.

    The files are written into a temporary directory beside it and moved into place at
    the end, so a refused or failed snapshot leaves nothing behind. On PostgreSQL all
    files are read in one repeatable-read transaction: their rows agree with each other
    and with the manifest's counts even while annotators keep rating.
    """
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(f"{target} exists and is not an empty directory; choose a new one")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    outermost = not connection.in_atomic_block
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql" and outermost:
                with connection.cursor() as cursor:
                    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            manifest = _write_files(staging, study, include_excluded, bom, command)
        (staging / MANIFEST).write_text(
            json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _write_files(staging: Path, study, include_excluded, bom, command) -> dict:
    files = {}
    for name, kind in SNAPSHOT_FILES.items():
        with open(staging / name, "wb") as stream:
            summary = export_write(
                stream, study, kind, include_excluded, bom=bom and kind != "jsonl"
            )
        files[name] = _described_file(kind, summary)
    studies = [study] if study is not None else list(Study.objects.order_by("pk"))
    files[AUDIT_FILE] = _write_audit(staging / AUDIT_FILE, studies)
    files[ANSWERS_FILE] = _write_answers(staging / ANSWERS_FILE, studies)
    # Other apps' files (the judges' ratings), read in the same transaction as the rest.
    for name, writer in snapshot_files():
        described = writer(staging / name, study)
        if described is not None:
            files[name] = described
    if study is not None:
        described = _write_results(staging / RESULTS_FILE, study)
        if described is not None:
            files[RESULTS_FILE] = described
    return export_manifest(
        study, include_excluded=include_excluded, bom=bom, command=command, files=files
    )


def _described_file(kind, summary) -> dict:
    return {"kind": kind, "rows": summary.rows, "bytes": summary.bytes, "sha256": summary.sha256}


def judgment_counts(study=None) -> dict:
    """How many judgments the export holds, and how many of them the results count
    (`Judgment.objects.counted()`, the same definition the results use)."""
    judgments = Judgment.objects.all()
    if study is not None:
        judgments = judgments.filter(item__study=study)
    return {
        "included": judgments.filter(excluded=False).count(),
        "excluded": judgments.filter(excluded=True).count(),
        "gold": judgments.filter(excluded=False, item__is_gold=True).count(),
        "counted": judgments.counted().count(),
    }


def export_manifest(study, *, include_excluded, bom, command, files) -> dict:
    """What an export is: its files with their checksums, the options and study design
    that made it, the counts, and the software that wrote it."""
    studies = [study] if study is not None else list(Study.objects.order_by("pk"))
    return {
        "format": MANIFEST_FORMAT,
        "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "software": software_version(),
        "command": command,
        "options": {
            "study": study.slug if study is not None else None,
            "include_excluded": include_excluded,
            "bom": bom,
        },
        "studies": [study_settings(s) for s in studies],
        "metrics": metric_definitions(),
        "judgments": judgment_counts(study),
        "files": files,
    }


def file_manifest_path(path) -> Path:
    """Where a single-file export's manifest goes: beside it, `NAME.manifest.json`."""
    path = Path(path)
    return path.with_name(path.name + ".manifest.json")


def file_write(
    path, study=None, kind="csv", *, include_excluded=False, bom=False, engine="auto", command=None
) -> dict:
    """Write one export file and its manifest beside it; return the manifest. On
    PostgreSQL the rows and the manifest's counts come from one repeatable-read
    transaction, so they agree even while annotators keep rating."""
    path = Path(path)
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        with open(path, "wb") as stream:
            summary = export_write(stream, study, kind, include_excluded, bom=bom, engine=engine)
        manifest = export_manifest(
            study,
            include_excluded=include_excluded,
            bom=bom,
            command=command,
            files={path.name: _described_file(kind, summary)},
        )
    file_manifest_path(path).write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return manifest


def _write_results(path: Path, study) -> dict | None:
    from ..models import StudyResults

    results = StudyResults.objects.filter(study=study).first()
    if results is None:
        return None
    document = {
        "computed_at": _setting(results.computed_at),
        "payload": results.payload,
    }
    data = (json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()
    path.write_bytes(data)
    return {
        "kind": "results",
        "rows": 1,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def _write_audit(path: Path, studies) -> dict:
    from ..selectors import audit_events_for_study

    digest, rows, size = hashlib.sha256(), 0, 0
    with open(path, "wb") as stream:
        for study in studies:
            for event in audit_events_for_study(study):
                line = (
                    json.dumps({"study": study.slug, **event}, ensure_ascii=False) + "\n"
                ).encode()
                stream.write(line)
                digest.update(line)
                rows += 1
                size += len(line)
    return {"kind": "audit", "rows": rows, "bytes": size, "sha256": digest.hexdigest()}


def _write_answers(path: Path, studies) -> dict:
    from ..results.loading import load_answer_styles

    styles: dict[int, tuple[int, int]] = {}
    for study in studies:
        styles.update(load_answer_styles(study))
    digest, size = hashlib.sha256(), 0
    with open(path, "wb") as stream:
        for answer in sorted(styles):
            length, decorated = styles[answer]
            line = (
                json.dumps({"answer": answer, "length": length, "decorations": decorated}) + "\n"
            ).encode()
            stream.write(line)
            digest.update(line)
            size += len(line)
    return {"kind": "answers", "rows": len(styles), "bytes": size, "sha256": digest.hexdigest()}
