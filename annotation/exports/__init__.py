"""The research export: every rating, unblinded, as a long CSV (one row per rating), a
wide CSV (one row per judgment) or JSONL, streamed so that memory stays flat; and frozen
snapshots of all three with a manifest."""

from .rows import (
    FORMULA_STARTS,
    KINDS,
    LONG_COLUMNS,
    export_lines,
    long_columns,
    long_rows,
    neutralise,
    wide_columns,
    wide_rows,
)
from .snapshot import (
    MANIFEST,
    SNAPSHOT_FILES,
    file_manifest_path,
    file_write,
    judgment_counts,
    snapshot_write,
    software_version,
)
from .streams import (
    BOM,
    ENGINES,
    ExportError,
    FileSummary,
    counted_chunks,
    export_chunks,
    export_write,
    uses_copy,
)

__all__ = [
    "BOM",
    "ENGINES",
    "FORMULA_STARTS",
    "KINDS",
    "LONG_COLUMNS",
    "MANIFEST",
    "SNAPSHOT_FILES",
    "ExportError",
    "FileSummary",
    "counted_chunks",
    "export_chunks",
    "export_lines",
    "export_write",
    "file_manifest_path",
    "file_write",
    "judgment_counts",
    "long_columns",
    "long_rows",
    "neutralise",
    "snapshot_write",
    "software_version",
    "uses_copy",
    "wide_columns",
    "wide_rows",
]
