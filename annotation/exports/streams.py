"""One way to produce an export as bytes, for HTTP streams, files and snapshots alike.

The long CSV comes from PostgreSQL's COPY when the database is PostgreSQL, from the
Python rows otherwise; both give the same bytes.
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import connection

from .postgres import long_csv_chunks
from .rows import KINDS, csv_header, export_lines, long_columns

BOM = "\ufeff".encode()
ENGINES = ("auto", "copy", "python")
CHUNK_BYTES = 256 * 1024


class ExportError(ValueError):
    """An export that cannot be made as asked; nothing was written."""


@dataclass(frozen=True)
class FileSummary:
    rows: int
    bytes: int
    sha256: str


def uses_copy(kind: str, engine: str = "auto") -> bool:
    postgres = connection.vendor == "postgresql"
    if engine == "python":
        return False
    if engine == "copy":
        if kind != "csv" or not postgres:
            raise ExportError("COPY makes only the long CSV, and only on PostgreSQL")
        return True
    if engine != "auto":
        raise ExportError(f"unknown export engine {engine!r}; use one of {', '.join(ENGINES)}")
    return kind == "csv" and postgres


def counted_chunks(
    study=None,
    kind: str = "csv",
    include_excluded: bool = False,
    *,
    bom: bool = False,
    engine: str = "auto",
) -> Iterator[tuple[bytes, int]]:
    """(bytes, rows in them) of the whole file: byte order mark, header, rows. Bad
    options are refused here, before anything is produced."""
    if kind not in KINDS:
        raise ExportError(f"unknown export kind {kind!r}; use one of {', '.join(KINDS)}")
    return _chunks(study, kind, include_excluded, bom, uses_copy(kind, engine))


def _chunks(study, kind, include_excluded, bom, copy) -> Iterator[tuple[bytes, int]]:
    if bom:
        yield BOM, 0
    if copy:
        yield csv_header(long_columns(include_excluded)).encode(), 0
        yield from long_csv_chunks(study.pk if study is not None else None, include_excluded)
        return
    lines = export_lines(study, kind, include_excluded)
    if kind != "jsonl":
        yield next(lines).encode(), 0
    buffer, size, rows = [], 0, 0
    for line in lines:
        data = line.encode()
        buffer.append(data)
        size += len(data)
        rows += 1
        if size >= CHUNK_BYTES:
            yield b"".join(buffer), rows
            buffer, size, rows = [], 0, 0
    if buffer:
        yield b"".join(buffer), rows


def export_chunks(study=None, kind="csv", include_excluded=False, **options) -> Iterator[bytes]:
    """The export as byte chunks, for a streamed HTTP response."""
    for data, _rows in counted_chunks(study, kind, include_excluded, **options):
        yield data


def export_write(stream, study=None, kind="csv", include_excluded=False, **options) -> FileSummary:
    """Write the export to a binary stream; say how many rows, bytes, and their SHA-256."""
    digest, rows, size = hashlib.sha256(), 0, 0
    for data, count in counted_chunks(study, kind, include_excluded, **options):
        stream.write(data)
        digest.update(data)
        rows += count
        size += len(data)
    return FileSummary(rows=rows, bytes=size, sha256=digest.hexdigest())
